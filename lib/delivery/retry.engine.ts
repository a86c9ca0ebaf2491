import { EmailBatchUncertainError } from '../errors/email-batch-uncertain.error.js';
import { EmailApiError } from '../errors/email-api.error.js';
import { EmailAbortError, EmailConnectionError, EmailTimeoutError } from '../errors/email-transport.error.js';
import { EmailError } from '../errors/email.error.js';
import { abortableSleep, type SleepEnd } from '../http/abortable-sleep.util.js';
import type { ApiCall, CallContext, EmailApiClient } from '../http/email-api.client.js';
import { isTransient, MIN_ATTEMPT_BUDGET_MS, retryDelay } from './retry.policy.js';
import type { BatchEmailItem } from '../interfaces/email-input.interface.js';
import type { EmailLog } from '../interfaces/email-records.interface.js';
import type { DeliveryObserver, ObservedCall } from './delivery.observer.js';

/** When the call whose context this is started (its deadline less its budget). */
export const callStart = (ctx: CallContext): Date => new Date(ctx.deadline - ctx.timeoutMs);

/**
 * The one retry loop of the module: backoff with full jitter, `Retry-After`, the call's deadline
 * and the caller's signal. Reads and batches run here; single sends add reconciliation on top
 * (`SendExecutor`) and use `plan` and `wait` from here.
 */
export class RetryEngine {
  constructor(
    readonly api: EmailApiClient,
    readonly observer: DeliveryObserver,
  ) {}

  /**
   * The wait before retry number `retry`, or undefined when there must be none: the service asked
   * for longer than we wait, or the wait would leave too little of the deadline for another attempt.
   */
  plan(err: unknown, retry: number, ctx: CallContext): number | undefined {
    const delay = retryDelay(err, retry);
    if (delay === undefined || Date.now() + delay + MIN_ATTEMPT_BUDGET_MS > ctx.deadline) return undefined;
    return delay;
  }

  /** Sleeps `ms`, cut short by the caller's signal; 'deadline' when no attempt can follow it in time. */
  wait(ms: number, ctx: CallContext): Promise<SleepEnd> {
    if (Date.now() + ms + MIN_ATTEMPT_BUDGET_MS > ctx.deadline) {
      return Promise.resolve(ctx.signal?.aborted ? 'aborted' : 'deadline');
    }
    return abortableSleep(ms, { signal: ctx.signal, deadline: ctx.deadline });
  }

  /** A read (list, get, listEvents): retried on connection errors, timeouts, 429, 500, 502, 503. */
  read<T>(call: ApiCall<T>, ctx: CallContext, maxRetries: number): Promise<T> {
    return this.observe(
      call,
      this.run(call, ctx, maxRetries, {
        mayRetry: isTransient,
        final: (err) => err,
      }),
    );
  }

  /**
   * A batch: retried only after a failure that proves nothing was accepted (refused connection, 429).
   * A failure after the request may have been processed ends the call with `EmailBatchUncertainError`.
   */
  batch(
    call: ApiCall<EmailLog[]>,
    ctx: CallContext,
    maxRetries: number,
    items: readonly BatchEmailItem[],
  ): Promise<EmailLog[]> {
    return this.observe(
      call,
      this.run(call, ctx, maxRetries, {
        mayRetry: (err) => err instanceof EmailError && err.outcome === 'not-sent' && isTransient(err),
        final: (err, attempts) => batchFailure(err, items, ctx, attempts),
        abortOutcome: 'not-sent', // only not-sent failures were retried, so nothing can have been accepted
      }),
    );
  }

  /** Reports the final outcome of a call to the observer and passes it on unchanged. */
  async observe<T>(call: ObservedCall, running: Promise<T>): Promise<T> {
    try {
      const result = await running;
      this.observer.outcome({ call });
      return result;
    } catch (err) {
      this.observer.outcome({ call, error: err });
      throw err;
    }
  }

  /** The loop shared by reads and batches; `policy` says what may be retried and what a last failure becomes. */
  private async run<T>(
    call: ApiCall<T>,
    ctx: CallContext,
    maxRetries: number,
    policy: LoopPolicy,
  ): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        const result = await this.api.attempt(call, ctx);
        this.observer.attempt({ call, attempt, attempts: maxRetries + 1 });
        return result;
      } catch (err) {
        const delay =
          attempt <= maxRetries && policy.mayRetry(err) ? this.plan(err, attempt - 1, ctx) : undefined;
        this.observer.attempt({ call, attempt, attempts: maxRetries + 1, error: err, retryDelayMs: delay });
        if (delay === undefined) throw policy.final(err, attempt);
        const end = await this.wait(delay, ctx);
        if (end === 'aborted') {
          const { method, path } = call;
          throw new EmailAbortError({
            method,
            path,
            cause: ctx.signal?.reason,
            outcome: policy.abortOutcome,
          });
        }
        if (end === 'deadline') throw err;
      }
    }
  }
}

/** What the shared loop may retry, and what the failure that ends it becomes. */
interface LoopPolicy {
  mayRetry: (err: unknown) => boolean;
  final: (err: unknown, attempts: number) => unknown;
  /** `outcome` of an abort during a backoff sleep (undefined for reads). */
  abortOutcome?: 'not-sent';
}

/**
 * The error a failed batch ends with: an `EmailBatchUncertainError` when the request may have been
 * processed (timeout, broken connection, 409 or 5xx), the failure itself otherwise (not sent, the
 * caller's abort, or an answer that breaks the contract).
 */
function batchFailure(
  err: unknown,
  items: readonly BatchEmailItem[],
  ctx: CallContext,
  attempts: number,
): unknown {
  const ambiguous =
    err instanceof EmailError &&
    err.outcome === 'uncertain' &&
    (err instanceof EmailApiError || err instanceof EmailTimeoutError || err instanceof EmailConnectionError);
  return ambiguous
    ? new EmailBatchUncertainError({ items, since: callStart(ctx), attempts, cause: err })
    : err;
}

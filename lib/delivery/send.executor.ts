import { EmailConflictError } from '../errors/email-api.error.js';
import { EmailSendUncertainError } from '../errors/email-send-uncertain.error.js';
import { EmailAbortError } from '../errors/email-transport.error.js';
import { EmailError } from '../errors/email.error.js';
import type { ApiCall, CallContext } from '../http/email-api.client.js';
import { isTransient, MIN_ATTEMPT_BUDGET_MS } from './retry.policy.js';
import type { EmailInput } from '../interfaces/email-input.interface.js';
import type { EmailLog } from '../interfaces/email-records.interface.js';
import { ClaimedRecords } from './claimed-records.store.js';
import { sentCriteria } from './find-sent.matcher.js';
import { callStart, type RetryEngine } from './retry.engine.js';
import { lookUpSent } from './sent.lookup.js';

/** Retries of the `GET /emails` look-up made while reconciling an uncertain send. */
export const RECONCILE_LOOKUP_RETRIES = 1;

/** One single send: the request (body and key fixed once), its context and the input it came from. */
export interface SendJob {
  call: ApiCall<EmailLog>;
  ctx: CallContext;
  /** The input as sent (defaults applied), for the look-up. */
  input: EmailInput;
  maxRetries: number;
}

/** Where a send stands after its failures so far. */
interface SendState {
  attempt: number;
  /** Some attempt may have reached the service and created the message. */
  uncertain: boolean;
}

/**
 * Runs a single send to a known outcome where it can: retries with the same key and byte-identical
 * body, and, when an attempt may have created the message, looks it up in the message log first.
 * Rules (design.md, "Delivery rules"):
 * - not-sent failures (refused connection, 429) are retried; other 4xx end the call;
 * - uncertain failures (timeout or reset after sending, 500, 502, 503, 409 pending) are reconciled,
 *   then retried with the same key; without a key they are never retried;
 * - a 409 that no earlier attempt of this call explains means the key belongs to another request:
 *   reconciled once, then `EmailConflictError`, never retried;
 * - unresolved at the end: `EmailSendUncertainError` whenever the send had a key (the failure is its
 *   `cause`); without a key, the failure itself.
 */
export class SendExecutor {
  private readonly claimed: ClaimedRecords | null;

  constructor(
    private readonly engine: RetryEngine,
    private readonly reconcile: boolean,
  ) {
    this.claimed = reconcile ? new ClaimedRecords() : null;
  }

  send(job: SendJob): Promise<EmailLog> {
    return this.engine.observe(job.call, this.sendOnce(job));
  }

  private async sendOnce(job: SendJob): Promise<EmailLog> {
    let record: EmailLog;
    try {
      record = await this.engine.api.attempt(job.call, job.ctx);
    } catch (err) {
      return this.recover(job, err);
    }
    this.claimed?.claim(record);
    this.engine.observer.attempt({ call: job.call, attempt: 1, attempts: job.maxRetries + 1 });
    return record;
  }

  private async recover(job: SendJob, firstError: unknown): Promise<EmailLog> {
    const { call, ctx, maxRetries } = job;
    const state: SendState = { attempt: 1, uncertain: false };
    let err = firstError;
    for (;;) {
      if (!(err instanceof EmailError)) throw err;
      if (err instanceof EmailAbortError) throw this.aborted(job, state, err);
      const ambiguous = err.outcome === 'uncertain';
      const conflict = err instanceof EmailConflictError && !state.uncertain;
      const failedAt = Date.now();
      let delay: number | undefined;
      if (state.attempt <= maxRetries && !conflict && this.mayRetry(err, ambiguous, call.idempotencyKey)) {
        delay = this.engine.plan(err, state.attempt - 1, ctx);
      }
      this.engine.observer.attempt({
        call,
        attempt: state.attempt,
        attempts: maxRetries + 1,
        error: err,
        retryDelayMs: delay,
      });
      if (ambiguous) state.uncertain = true;
      if (this.reconcile && state.uncertain && (ambiguous || delay === undefined)) {
        const found = await this.lookUp(job, state);
        if (found) return found;
      }
      if (delay === undefined) throw this.unresolved(job, state, err, conflict);
      const end = await this.engine.wait(Math.max(0, delay - (Date.now() - failedAt)), ctx);
      if (end === 'aborted') throw this.aborted(job, state);
      if (end === 'deadline') throw this.unresolved(job, state, err, conflict);
      state.attempt++;
      try {
        const record = await this.engine.api.attempt(call, ctx);
        this.claimed?.claim(record);
        this.engine.observer.attempt({ call, attempt: state.attempt, attempts: maxRetries + 1 });
        return record;
      } catch (next) {
        err = next;
      }
    }
  }

  /** Whether this failure allows another attempt with the same key and body. */
  private mayRetry(err: EmailError, ambiguous: boolean, key: string | undefined): boolean {
    if (!ambiguous) return isTransient(err);
    return key !== undefined && (isTransient(err) || err instanceof EmailConflictError);
  }

  /** The look-up of an uncertain send; a record found is claimed so no other call gets it. */
  private async lookUp(job: SendJob, state: SendState): Promise<EmailLog | null> {
    const { call, ctx } = job;
    if (ctx.deadline - Date.now() < MIN_ATTEMPT_BUDGET_MS) {
      this.engine.observer.reconcile({ call, result: 'skipped' });
      return null;
    }
    const claimed = this.claimed as ClaimedRecords;
    try {
      const criteria = sentCriteria(job.input, callStart(ctx));
      const found = await lookUpSent(this.engine, criteria, ctx, RECONCILE_LOOKUP_RETRIES, (r) =>
        claimed.has(r),
      );
      if (found) claimed.claim(found);
      this.engine.observer.reconcile(
        found ? { call, result: 'found', messageId: found.id } : { call, result: 'not-found' },
      );
      return found;
    } catch (err) {
      if (err instanceof EmailAbortError) throw this.aborted(job, state);
      this.engine.observer.reconcile({ call, result: 'failed', error: err });
      return null;
    }
  }

  /** The caller's abort; never `'not-sent'` once an attempt may have reached the service. */
  private aborted(job: SendJob, state: SendState, err?: EmailAbortError): EmailAbortError {
    if (err && (err.outcome === 'uncertain' || !state.uncertain)) return err;
    const { method, path } = job.call;
    const outcome = state.uncertain ? 'uncertain' : 'not-sent';
    return new EmailAbortError({ method, path, cause: err?.cause ?? job.ctx.signal?.reason, outcome });
  }

  /** The error of a send that ends without a record. */
  private unresolved(job: SendJob, state: SendState, err: EmailError, conflict: boolean): EmailError {
    const key = job.call.idempotencyKey;
    if (!state.uncertain || conflict || key === undefined) return err;
    return new EmailSendUncertainError({ idempotencyKey: key, attempts: state.attempt, cause: err });
  }
}

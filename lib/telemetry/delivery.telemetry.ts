import type { LoggerService } from '@nestjs/common';
import { EmailApiError } from '../errors/email-api.error.js';
import {
  EmailAbortError,
  EmailConnectionError,
  EmailTimeoutError,
  EmailUnexpectedResponseError,
} from '../errors/email-transport.error.js';
import type { EmailOperation } from './email-telemetry.constants.js';

const CONTEXT = 'EmailModule';

/** A short, secret-free word for how an attempt ended: a status, a code, `timeout`... */
export function describeFailure(err: unknown): string {
  if (err instanceof EmailApiError) return String(err.status);
  if (err instanceof EmailUnexpectedResponseError) return `${err.status} (unexpected response)`;
  if (err instanceof EmailTimeoutError) return 'timeout';
  if (err instanceof EmailAbortError) return 'aborted';
  if (err instanceof EmailConnectionError) return err.code ?? 'connection error';
  return err instanceof Error ? err.name : 'failure';
}

/** The call an event is about: never a body, an address or the API key. */
export interface ObservedCall {
  method: string;
  path: string;
  idempotencyKey?: string;
}

/** One attempt of a call. `error` undefined means it succeeded; `retryDelayMs` undefined means no retry follows. */
export interface AttemptEvent {
  call: ObservedCall;
  attempt: number;
  attempts: number;
  error?: unknown;
  retryDelayMs?: number;
}

/** A look-up in the message log for a send that may have created its message. */
export interface ReconcileEvent {
  call: ObservedCall;
  /** `'unproven'`: look-alike records exist, but none can be shown to be this call's own. */
  result: 'found' | 'not-found' | 'unproven' | 'skipped' | 'failed';
  messageId?: number;
  error?: unknown;
}

/** How a call ended: `error` undefined means it succeeded. */
export interface OutcomeEvent {
  call: ObservedCall;
  error?: unknown;
}

/** The start of an `EmailService` operation: what it is, never what it carries. */
export interface OperationEvent {
  operation: EmailOperation;
  /** `get` and `listEvents`: the message id. */
  messageId?: number;
  /** `sendBatch`: how many messages. */
  batchSize?: number;
}

/**
 * The one observation hook of a module instance: `EmailService` hands each operation to `operation`
 * (telemetry runs it in a span), and the request loop reports each attempt, each reconcile look-up and
 * the outcome of each call. The default (`LoggingDeliveryObserver`) writes debug lines, and a warning
 * for a call the service refused with a 4xx; telemetry (`EmailTelemetry`) is the other one.
 * This abstract class is also the DI token of an instance's observer. Observers must not throw.
 */
export abstract class DeliveryObserver {
  /** Runs one operation of `EmailService` (e.g. in a span); without it the operation just runs. */
  operation?<T>(event: OperationEvent, run: () => Promise<T>): Promise<T>;
  /**
   * Whether the observer has anything to do for an operation that starts now. False means that
   * `operation` would only run it, and that the `attempt` and `outcome` events of its success would
   * change nothing, so the caller may skip them (failures are always told). Without it: true.
   */
  watching?(): boolean;
  abstract attempt(event: AttemptEvent): void;
  abstract reconcile(event: ReconcileEvent): void;
  abstract outcome(event: OutcomeEvent): void;
}

/** Whether `observer` has anything to do for an operation that starts now (see `DeliveryObserver.watching`). */
export function isWatching(observer: DeliveryObserver): boolean {
  return observer.watching === undefined || observer.watching();
}

/** Runs `run` through `observer.operation` when it has one. */
export function observeOperation<T>(
  observer: DeliveryObserver,
  event: OperationEvent,
  run: () => Promise<T>,
): Promise<T> {
  return observer.operation === undefined ? run() : observer.operation(event, run);
}

/**
 * Tells every observer each event, each guarded (what one throws is ignored: a call's outcome never
 * depends on an observer); operations run through every `operation` hook, nested. Watching when any
 * observer is. No closure per event.
 */
export function allObservers(observers: readonly DeliveryObserver[]): DeliveryObserver {
  const hooks = observers.filter((o) => o.operation !== undefined);
  return new (class extends DeliveryObserver {
    override operation<T>(event: OperationEvent, run: () => Promise<T>): Promise<T> {
      if (hooks.length === 0) return run(); // telemetry off: nothing built per call
      return hooks.reduceRight<() => Promise<T>>((next, o) => () => o.operation!(event, next), run)();
    }
    override watching(): boolean {
      for (const o of observers) if (isWatching(o)) return true;
      return false;
    }
    attempt(event: AttemptEvent): void {
      for (const o of observers) {
        try {
          o.attempt(event);
        } catch {
          // ignored
        }
      }
    }
    reconcile(event: ReconcileEvent): void {
      for (const o of observers) {
        try {
          o.reconcile(event);
        } catch {
          // ignored
        }
      }
    }
    outcome(event: OutcomeEvent): void {
      for (const o of observers) {
        try {
          o.outcome(event);
        } catch {
          // ignored
        }
      }
    }
  })();
}

const keyOf = (call: ObservedCall): string =>
  call.idempotencyKey === undefined ? '' : ` key=${call.idempotencyKey}`;

/**
 * Debug lines about attempts, one per request, e.g.
 * `POST /emails attempt 2/3 -> 503 (retry in 412 ms) key=nte_…`. Lines carry the method, the path,
 * the status or error code, the delay and the idempotency key; never a body, an address or the API key.
 * Nothing is built when logging is off.
 */
export class LoggingDeliveryObserver extends DeliveryObserver {
  constructor(private readonly logger: LoggerService | false) {
    super();
  }

  override watching(): boolean {
    return this.logger !== false;
  }

  attempt({ call, attempt, attempts, error, retryDelayMs }: AttemptEvent): void {
    if (this.logger === false) return;
    const failed = error !== undefined;
    const result = failed ? describeFailure(error) : 'ok';
    const next = !failed ? '' : retryDelayMs === undefined ? ' (no retry)' : ` (retry in ${retryDelayMs} ms)`;
    this.logger.debug?.(
      `${call.method} ${call.path} attempt ${attempt}/${attempts} -> ${result}${next}${keyOf(call)}`,
      CONTEXT,
    );
  }

  reconcile({ call, result, messageId, error }: ReconcileEvent): void {
    if (this.logger === false) return;
    const text =
      result === 'found'
        ? `found message ${messageId}`
        : result === 'not-found'
          ? 'not found'
          : result === 'unproven'
            ? "look-alikes found, none proven to be this call's own: none adopted"
            : result === 'skipped'
              ? 'skipped, no time left'
              : `look-up failed (${describeFailure(error)})`;
    this.logger.debug?.(`${call.method} ${call.path} reconcile -> ${text}${keyOf(call)}`, CONTEXT);
  }

  /**
   * A call the service refused with a 4xx is logged once, at warn, with the service's reason (the
   * error's `apiMessage`, already redacted and cut when the error was built), e.g.
   * `POST /emails refused with 400: variables.coupon is not used by the template key=nte_…`.
   * Other outcomes add nothing to the debug lines of the attempts.
   */
  outcome({ call, error }: OutcomeEvent): void {
    if (this.logger === false || !(error instanceof EmailApiError)) return;
    if (error.status < 400 || error.status > 499) return;
    const reason = error.apiMessage ?? '(the service gave no reason)';
    this.logger.warn(
      `${call.method} ${call.path} refused with ${error.status}: ${reason}${keyOf(call)}`,
      CONTEXT,
    );
  }
}

import type { LoggerService } from '@nestjs/common';
import { EmailApiError } from '../errors/email-api.error.js';
import {
  EmailAbortError,
  EmailConnectionError,
  EmailTimeoutError,
  EmailUnexpectedResponseError,
} from '../errors/email-transport.error.js';
import type { EmailSuppressionReason } from '../interfaces/suppression.interface.js';
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
  /** The account id, only with `telemetry: { accountAttribute: true }`. */
  account?: string;
}

/** Recipients the suppression list refused before any request: counts by reason, never an address. */
export interface SuppressedEvent {
  /** What was refused: a send, a batch, items of `sendMany`, or jobs before they were written. */
  operation: 'send' | 'sendBatch' | 'sendMany' | 'job';
  recipients: number;
  reasons: Partial<Record<EmailSuppressionReason, number>>;
}

/**
 * The one observation hook of a module instance: `EmailService` hands each operation to `operation`
 * (telemetry runs it in a span), and the request loop reports each attempt, each reconcile look-up and
 * the outcome of each call. The default (`LoggingDeliveryObserver`) writes one line per call at most (a
 * warning for an uncertain send or a 4xx refusal, debug otherwise); telemetry (`EmailTelemetry`) is the other one.
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
  /** Recipients the suppression list refused (no request was made for them). */
  suppressed?(event: SuppressedEvent): void;
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
    override suppressed(event: SuppressedEvent): void {
      for (const o of observers) {
        try {
          o.suppressed?.(event);
        } catch {
          // ignored
        }
      }
    }
  })();
}

const keyOf = (call: ObservedCall): string =>
  call.idempotencyKey === undefined ? '' : ` key=${call.idempotencyKey}`;

const lookUpText = ({ result, messageId, error }: ReconcileEvent): string =>
  result === 'found'
    ? `found message ${messageId}`
    : result === 'not-found'
      ? 'not found'
      : result === 'unproven'
        ? "look-alikes found, none proven to be this call's own: none adopted"
        : result === 'skipped'
          ? 'skipped, no time left'
          : `failed (${describeFailure(error)})`;

/**
 * One line per call at most, written when the call ends, so that a production app can leave the
 * `debug` level on:
 * - a send (or batch) that succeeded: one `debug` line, with its failed attempts when there were any,
 *   e.g. `POST /emails -> ok after 503 (retry in 412 ms) key=nte_…`;
 * - a read that succeeded at once: nothing (after retries: one `debug` line);
 * - a send whose outcome is still unknown (`outcome: 'uncertain'`): one `warn` line with every attempt and
 *   look-up, e.g. `POST /emails outcome unknown after 2 attempts: reset (retry in 120 ms), reset (no retry);
 *   look-up: not found; resolve it only with the same key key=nte_…`;
 * - a call the service refused with a 4xx: one `warn` line with the service's reason;
 * - any other failure: one `debug` line (the caller gets the error; its handling is the app's).
 * Lines carry the method, the path, statuses or error codes, delays and the idempotency key; never a body,
 * an address or the API key. Nothing is kept or built when logging is off.
 */
export class LoggingDeliveryObserver extends DeliveryObserver {
  /** What each running call did so far (`503 (retry in 412 ms)`, `look-up: not found`), until its outcome. */
  private readonly steps = new WeakMap<ObservedCall, string[]>();

  constructor(private readonly logger: LoggerService | false) {
    super();
  }

  override watching(): boolean {
    return this.logger !== false;
  }

  attempt({ call, attempts, error, retryDelayMs }: AttemptEvent): void {
    if (this.logger === false || error === undefined) return;
    const next = retryDelayMs === undefined ? ' (no retry)' : ` (retry in ${retryDelayMs} ms)`;
    this.note(call, `${describeFailure(error)}${attempts > 1 ? next : ''}`);
  }

  reconcile(event: ReconcileEvent): void {
    if (this.logger === false) return;
    this.note(event.call, `look-up: ${lookUpText(event)}`);
  }

  outcome({ call, error }: OutcomeEvent): void {
    if (this.logger === false) return;
    const steps = this.steps.get(call) ?? [];
    this.steps.delete(call);
    const line = `${call.method} ${call.path}`;
    const key = keyOf(call);
    if (error === undefined) {
      if (steps.length === 0 && call.method === 'GET') return;
      const after = steps.length === 0 ? '' : ` after ${steps.join(', ')}`;
      this.logger.debug?.(`${line} -> ok${after}${key}`, CONTEXT);
      return;
    }
    if (error instanceof EmailApiError && error.status >= 400 && error.status <= 499) {
      const reason = error.apiMessage ?? '(the service gave no reason)';
      this.logger.warn(`${line} refused with ${error.status}: ${reason}${key}`, CONTEXT);
      return;
    }
    const tried = steps.filter((s) => !s.startsWith('look-up:'));
    const summary = steps.length === 0 ? describeFailure(error) : steps.join(', ');
    if (call.method === 'POST' && (error as { outcome?: unknown }).outcome === 'uncertain') {
      const count = Math.max(tried.length, 1);
      this.logger.warn(
        `${line} outcome unknown after ${count} attempt${count === 1 ? '' : 's'}: ${summary}; ` +
          `${call.idempotencyKey === undefined ? 'no key: look it up (findSent) before sending again' : 'send again only with the same key'}${key}`,
        CONTEXT,
      );
      return;
    }
    this.logger.debug?.(`${line} -> failed: ${summary}${key}`, CONTEXT);
  }

  /** One debug line per refusal: how many recipients and why, never which. */
  override suppressed({ operation, recipients, reasons }: SuppressedEvent): void {
    if (this.logger === false) return;
    const why = Object.entries(reasons)
      .map(([reason, n]) => `${reason}: ${n}`)
      .join(', ');
    this.logger.debug?.(
      `${operation}: ${recipients} recipient${recipients === 1 ? '' : 's'} refused by the suppression list before any request (${why})`,
      CONTEXT,
    );
  }

  private note(call: ObservedCall, step: string): void {
    const steps = this.steps.get(call);
    if (steps === undefined) this.steps.set(call, [step]);
    else steps.push(step);
  }
}

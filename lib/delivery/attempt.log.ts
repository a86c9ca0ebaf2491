import type { LoggerService } from '@nestjs/common';
import { EmailApiError } from '../errors/email-api.error.js';
import {
  EmailAbortError,
  EmailConnectionError,
  EmailTimeoutError,
  EmailUnexpectedResponseError,
} from '../errors/email-transport.error.js';

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

/**
 * Debug lines about attempts, one per request, e.g.
 * `POST /emails attempt 2/3 -> 503 (retry in 412 ms) key=nte_…`. Lines carry the method, the path,
 * the status or error code, the delay and the idempotency key; never a body, an address or the API key.
 * Nothing is built when logging is off.
 */
export class AttemptLog {
  constructor(private readonly logger: LoggerService | false) {}

  /** One attempt: `failure` undefined means it succeeded; `delay` undefined means no retry follows. */
  attempt(
    call: { method: string; path: string; idempotencyKey?: string },
    attempt: number,
    attempts: number,
    failure?: unknown,
    delay?: number,
  ): void {
    if (this.logger === false) return;
    const result = failure === undefined ? 'ok' : describeFailure(failure);
    const next = failure === undefined ? '' : delay === undefined ? ' (no retry)' : ` (retry in ${delay} ms)`;
    const key = call.idempotencyKey === undefined ? '' : ` key=${call.idempotencyKey}`;
    this.logger.debug?.(
      `${call.method} ${call.path} attempt ${attempt}/${attempts} -> ${result}${next}${key}`,
      CONTEXT,
    );
  }

  /** What the look-up in the message log found for an uncertain send. */
  reconciled(call: { method: string; path: string; idempotencyKey?: string }, result: string): void {
    if (this.logger === false) return;
    const key = call.idempotencyKey === undefined ? '' : ` key=${call.idempotencyKey}`;
    this.logger.debug?.(`${call.method} ${call.path} reconcile -> ${result}${key}`, CONTEXT);
  }
}

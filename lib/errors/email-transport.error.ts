import { isRetryable } from '../policy/delivery.policy.js';
import { EmailError, type EmailErrorOptions } from './email.error.js';

/** Where a transport-level failure happened. */
export interface EmailTransportErrorInit extends EmailErrorOptions {
  method: string;
  path: string;
}

/**
 * The whole-call deadline (`timeoutMs`) or an undici connect/headers/body timeout was reached.
 * @publicApi
 */
export class EmailTimeoutError extends EmailError {
  readonly method: string;
  readonly path: string;
  /** The deadline that was reached, in milliseconds. */
  readonly timeoutMs: number;

  constructor(init: EmailTransportErrorInit & { timeoutMs: number }) {
    super(`${init.method} ${init.path} timed out after ${init.timeoutMs} ms`, {
      retryable: isRetryable('timeout'),
      ...init,
    });
    this.method = init.method;
    this.path = init.path;
    this.timeoutMs = init.timeoutMs;
  }
}

/**
 * The connection could not be made, or broke before a complete answer arrived.
 * @publicApi
 */
export class EmailConnectionError extends EmailError {
  readonly method: string;
  readonly path: string;
  /** The system or undici error code, e.g. `ECONNREFUSED`, `UND_ERR_SOCKET`. */
  readonly code?: string;

  constructor(init: EmailTransportErrorInit & { code?: string; reason: string }) {
    super(`${init.method} ${init.path} failed: ${init.reason}`, {
      retryable: isRetryable('connection'),
      ...init,
    });
    this.method = init.method;
    this.path = init.path;
    if (init.code !== undefined) this.code = init.code;
  }
}

/**
 * The caller's AbortSignal ended the call.
 * @publicApi
 */
export class EmailAbortError extends EmailError {
  readonly method: string;
  readonly path: string;

  constructor(init: EmailTransportErrorInit) {
    super(`${init.method} ${init.path} was aborted by the caller`, {
      retryable: isRetryable('abort'),
      ...init,
    });
    this.method = init.method;
    this.path = init.path;
  }
}

/**
 * The service answered in a way the contract does not allow (not JSON, missing or mistyped fields).
 * @publicApi
 */
export class EmailUnexpectedResponseError extends EmailError {
  readonly status: number;
  readonly method: string;
  readonly path: string;
  /** The start of the offending body, for diagnosis. */
  readonly excerpt: string;

  constructor(init: EmailTransportErrorInit & { status: number; reason: string; excerpt: string }) {
    super(
      `${init.method} ${init.path} returned an unexpected response (status ${init.status}): ${init.reason}`,
      { retryable: isRetryable('unexpected-response'), ...init },
    );
    this.status = init.status;
    this.method = init.method;
    this.path = init.path;
    this.excerpt = init.excerpt;
  }
}

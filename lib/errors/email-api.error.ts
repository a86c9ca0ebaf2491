import { isRetryable } from '../policy/delivery.policy.js';
import { EmailError, type EmailErrorOptions } from './email.error.js';

/** Where an error response came from. */
export interface EmailApiErrorInit extends EmailErrorOptions {
  status: number;
  method: string;
  path: string;
  /** The `error` text of the response body, when it had one. */
  apiMessage?: string;
}

/**
 * The service answered with an error status. Subclasses exist for each documented status.
 * @publicApi
 */
export class EmailApiError extends EmailError {
  /** HTTP status of the response. */
  readonly status: number;
  /** Request method, e.g. `POST`. */
  readonly method: string;
  /** Operation path relative to the base URL, e.g. `/emails`. */
  readonly path: string;
  /** The service's own `error` text, if the body carried one. */
  readonly apiMessage?: string;

  constructor(init: EmailApiErrorInit) {
    const detail = init.apiMessage ? `: ${init.apiMessage}` : '';
    // `retryable` from the one table (policy/delivery.policy.ts) unless the maker knows better
    const retryable = init.retryable ?? isRetryable('status', init.status);
    super(`${init.method} ${init.path} failed with status ${init.status}${detail}`, { ...init, retryable });
    this.status = init.status;
    this.method = init.method;
    this.path = init.path;
    if (init.apiMessage !== undefined) this.apiMessage = init.apiMessage;
  }
}

/**
 * 400: the service refused the request or its content.
 * @publicApi
 */
export class EmailBadRequestError extends EmailApiError {}
/**
 * 401: missing, invalid or revoked API key.
 * @publicApi
 */
export class EmailAuthenticationError extends EmailApiError {}
/**
 * 403: permission, sending-domain or plan-feature restriction.
 * @publicApi
 */
export class EmailForbiddenError extends EmailApiError {}
/**
 * 404: the message does not exist.
 * @publicApi
 */
export class EmailNotFoundError extends EmailApiError {}
/**
 * 409 on a send: another request used this idempotency key with a different body, or the first
 * request with this key is still pending. Never retry with a new key; inspect the message log.
 * @publicApi
 */
export class EmailConflictError extends EmailApiError {}
/**
 * 500: server failure; a send's outcome is uncertain.
 * @publicApi
 */
export class EmailServerError extends EmailApiError {}
/**
 * 502: provider failure; a send's outcome is uncertain.
 * @publicApi
 */
export class EmailProviderError extends EmailApiError {}
/**
 * 503: temporary failure; a send's outcome is uncertain.
 * @publicApi
 */
export class EmailUnavailableError extends EmailApiError {}

/**
 * 429: a quota or the request rate was exceeded. Nothing was sent.
 * @publicApi
 */
export class EmailRateLimitError extends EmailApiError {
  /**
   * How long to wait before trying again, in milliseconds: what the service asked (`Retry-After`) up to
   * the 60 s the module ever waits (its `rateLimit` pause, the queue's and the outbox's, the interceptor's
   * `Retry-After`), or, when the module's own `rateLimit` refused the call, when its budget has room again.
   * Undefined when the service gave no `Retry-After`.
   */
  readonly retryAfterMs?: number;
  /**
   * What the service's `Retry-After` asked for, in milliseconds, when it was more than the module waits
   * (`retryAfterMs` is then the cap): such a 429 is not retried by the call. Undefined otherwise.
   */
  readonly requestedRetryAfterMs?: number;
  /**
   * Set when no request was made: the module's `rateLimit` budget named here had no room before the
   * call's deadline (or never can have: one request larger than the whole budget, `retryable: false`).
   * Undefined when the service itself answered 429.
   */
  readonly budget?: 'recipients' | 'requests' | 'paused';
  /**
   * Whose budget refused it: the account's own (a call made with `{ account }`; `'paused'`: the account
   * drew a 429 and waits it out, in every process), or the module's `rateLimit` (over every account).
   */
  readonly budgetOf?: 'account' | 'module';

  constructor(
    init: EmailApiErrorInit & {
      retryAfterMs?: number;
      requestedRetryAfterMs?: number;
      budget?: 'recipients' | 'requests' | 'paused';
      budgetOf?: 'account' | 'module';
      /** A request larger than the whole budget: what it needs, and the budget's limit. */
      budgetSize?: { needs: number; limit: number };
    },
  ) {
    super(init);
    if (init.retryAfterMs !== undefined) this.retryAfterMs = init.retryAfterMs;
    if (init.requestedRetryAfterMs !== undefined) this.requestedRetryAfterMs = init.requestedRetryAfterMs;
    if (init.budget !== undefined) {
      this.budget = init.budget;
      this.budgetOf = init.budgetOf ?? 'module';
      const whose = this.budgetOf === 'account' ? "the account's" : 'the';
      this.message =
        init.budget === 'paused'
          ? `${init.method} ${init.path} not made: the account is paused after a 429 from the service, in every process sharing its limits (room again in ${init.retryAfterMs ?? 0} ms)`
          : init.retryAfterMs !== undefined
            ? `${init.method} ${init.path} not made: ${whose} rateLimit ${init.budget} budget has no room before the call's deadline (room again in ${init.retryAfterMs} ms)`
            : `${init.method} ${init.path} not made: it alone is larger than ${whose} whole rateLimit ${init.budget} budget` +
              (init.budgetSize === undefined
                ? ''
                : ` (it needs ${init.budgetSize.needs}, the whole budget is ${init.budgetSize.limit})`) +
              `, so it can never be made: split it (sendMany sends a list of any size in parts that fit)`;
    }
  }
}

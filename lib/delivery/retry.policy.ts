import { EmailApiError, EmailRateLimitError, RETRYABLE_STATUSES } from '../errors/email-api.error.js';
import { EmailConnectionError, EmailTimeoutError } from '../errors/email-transport.error.js';

/** First backoff ceiling: the first retry waits a random 0 to 250 ms. */
export const RETRY_BASE_DELAY_MS = 250;

/** Largest backoff ceiling, however many retries came before. */
export const RETRY_MAX_DELAY_MS = 8_000;

/** Longest `Retry-After` obeyed; a 429 asking for more is not retried (the caller sees it at once). */
export const RETRY_AFTER_CAP_MS = 60_000;

/**
 * Least time that must remain of a call's deadline after a backoff for another attempt to be
 * started; with less, the call ends with the failure it has rather than one that is sure to time out.
 */
export const MIN_ATTEMPT_BUDGET_MS = 50;

/**
 * Backoff before retry number `retry` (0 for the first retry): exponential with full jitter,
 * a random wait from 0 to `min(cap, base * 2^retry)`.
 *
 * @example
 * backoffDelay(0); // 0 to 250 ms
 * backoffDelay(3); // 0 to 2000 ms
 */
export function backoffDelay(retry: number, random: () => number = Math.random): number {
  return Math.floor(random() * backoffCeiling(retry));
}

/**
 * A failure that may go away on its own: connection errors, timeouts, 429, 500, 502 and 503.
 * Whether a send may be tried again also depends on its `outcome` (see the send executor).
 */
export function isTransient(err: unknown): boolean {
  if (err instanceof EmailApiError) return RETRYABLE_STATUSES.has(err.status); // the table `retryable` reads
  return err instanceof EmailConnectionError || err instanceof EmailTimeoutError;
}

/** The backoff ceiling of retry number `retry`: the floor of any wait a `Retry-After` asks for. */
export function backoffCeiling(retry: number): number {
  return Math.min(RETRY_MAX_DELAY_MS, RETRY_BASE_DELAY_MS * 2 ** Math.min(retry, 30));
}

/**
 * How long to wait before retry number `retry`: the service's `Retry-After` when a 429 gave one, but
 * never less than the backoff ceiling of that retry (a `Retry-After` of 0, -5, 0.0001 or a past date
 * would otherwise retry at once); otherwise the jittered backoff. Undefined when the service asked for longer than
 * `RETRY_AFTER_CAP_MS`: waiting that long inside one call is not worth it.
 */
export function retryDelay(
  err: unknown,
  retry: number,
  random: () => number = Math.random,
): number | undefined {
  if (err instanceof EmailRateLimitError && err.retryAfterMs !== undefined) {
    if (err.retryAfterMs > RETRY_AFTER_CAP_MS) return undefined;
    return Math.max(err.retryAfterMs, backoffCeiling(retry));
  }
  return backoffDelay(retry, random);
}

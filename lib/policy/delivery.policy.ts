/**
 * THE decision table for retries and outcomes. The request loop (`delivery/request.engine.ts`), the
 * public `retryable` flag of our errors, the HTTP error mapping, the rate limiter, the queue's backoff
 * and the job-attempt routine all read it; none decides on its own. Plain values in, plain values out:
 * the callers classify their errors, this file decides. See docs/delivery.md for the rules as users read them.
 */

// ── Which failures retry ─────────────────────────────────────────────────────────────────────────────

/** Statuses after which the same request may be made again (a send only with its key); 504, 408... are not. */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 500, 502, 503]);

/** A failed attempt, as the table knows it: an error status, or a failure of the exchange itself. */
export type FailureKind = 'status' | 'connection' | 'timeout' | 'abort' | 'unexpected-response';

/** Whether trying the same request again may succeed: the `retryable` flag every error carries. */
export function isRetryable(kind: FailureKind, status = 0): boolean {
  if (kind === 'status') return RETRYABLE_STATUSES.has(status);
  return kind === 'connection' || kind === 'timeout';
}

// ── The outcome of each failure ──────────────────────────────────────────────────────────────────────

/** What a failed exchange proves: it never left, or it may have reached the service and been acted on. */
export type Evidence = 'not-sent' | 'maybe-processed';

/** A send's `outcome` (the public `SendOutcome`). */
export type Outcome = 'not-sent' | 'uncertain';

/** The `outcome` an error carries. Only a call that may create a message has one; a read has none. */
export function outcomeOf(createsMessage: boolean, evidence: Evidence): Outcome | undefined {
  if (!createsMessage) return undefined;
  return evidence === 'not-sent' ? 'not-sent' : 'uncertain';
}

/** An error status proves nothing was created for every 4xx but 409; anything else may have been processed. */
export function statusEvidence(status: number): Evidence {
  return status === 409 || status >= 500 || status < 400 ? 'maybe-processed' : 'not-sent';
}

/** Error codes that prove the connection was never made, so the request never reached the service. */
const NOT_CONNECTED = new Set(
  (
    'ECONNREFUSED ENOTFOUND EAI_AGAIN EHOSTUNREACH ENETUNREACH EADDRNOTAVAIL UND_ERR_CONNECT_TIMEOUT ' +
    'UND_ERR_CLOSED UND_ERR_DESTROYED UND_ERR_INVALID_ARG ERR_TLS_CERT_ALTNAME_INVALID CERT_HAS_EXPIRED ' +
    'DEPTH_ZERO_SELF_SIGNED_CERT SELF_SIGNED_CERT_IN_CHAIN UNABLE_TO_VERIFY_LEAF_SIGNATURE'
  ).split(' '),
);

/** A transport failure: stopped in flight (deadline, abort) or an unknown code may have been processed. */
export function transportEvidence(code: string | undefined, stoppedInFlight: boolean): Evidence {
  return !stoppedInFlight && code !== undefined && NOT_CONNECTED.has(code) ? 'not-sent' : 'maybe-processed';
}

// ── Backoff with jitter (one jitter: full), Retry-After ──────────────────────────────────────────────

/** How waits grow: the ceiling of retry n is `min(maxMs, baseMs * 2^n)`. */
export interface BackoffSchedule {
  baseMs: number;
  maxMs: number;
}

/** The request loop's schedule: the first retry waits 0 to 250 ms, none more than 8 s. */
export const RETRY_BACKOFF: BackoffSchedule = { baseMs: 250, maxMs: 8_000 };

/** Longest `Retry-After` obeyed; a 429 asking for more is not retried by the loop. */
export const RETRY_AFTER_CAP_MS = 60_000;

/** How long a 429 without `Retry-After` pauses a shared budget or the queue. */
export const RETRY_AFTER_DEFAULT_MS = 1_000;

/** Least time that must remain of a call's deadline after a wait for another attempt to be started. */
export const MIN_ATTEMPT_BUDGET_MS = 50;

/** The backoff ceiling of retry number `retry` (0 for the first): also the floor of any `Retry-After` wait. */
export function backoffCeiling(retry: number, schedule: BackoffSchedule = RETRY_BACKOFF): number {
  return Math.min(schedule.maxMs, schedule.baseMs * 2 ** Math.min(Math.max(0, retry), 30));
}

/** Exponential backoff with full jitter: a random wait from 0 to the ceiling. The loop's and the queue's. */
export function backoffDelay(
  retry: number,
  random: () => number = Math.random,
  schedule: BackoffSchedule = RETRY_BACKOFF,
): number {
  return Math.floor(random() * backoffCeiling(retry, schedule));
}

/** Reads a `Retry-After` header (seconds or an HTTP date) as ms from `now`; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined) return undefined;
  const trimmed = text.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** How long a 429 pauses a shared budget or the queue: its `Retry-After` (1 s without), at most the cap. */
export function retryAfterPauseMs(retryAfterMs: number | undefined): number {
  return Math.min(RETRY_AFTER_CAP_MS, Math.max(retryAfterMs ?? RETRY_AFTER_DEFAULT_MS, 1));
}

/** Whether a wait of `ms` from `now` still leaves room for an attempt before `deadline`. */
export function fitsDeadline(now: number, ms: number, deadline: number): boolean {
  return now + ms + MIN_ATTEMPT_BUDGET_MS <= deadline;
}

// ── The request loop: retry or not, how long to wait, what the last failure becomes ──────────────────

/** One failed attempt of a call, classified by the loop. */
export interface FailedAttempt {
  retryable: boolean;
  /** The error status, when the service answered. */
  status?: number;
  /** A 429's `Retry-After`, in ms. */
  retryAfterMs?: number;
  /** The attempt may have reached the service and been processed (`outcome: 'uncertain'`). */
  processed: boolean;
}

/** Where the call stands: its description and its failures so far. */
export interface CallSoFar {
  attempt: number; // 1 for the first
  maxRetries: number;
  /** May be repeated after an attempt that may have been processed (a send with a key). */
  idempotent: boolean;
  /** The key was made for this call: a 409 can only mean "an earlier attempt is still pending". */
  freshKey?: boolean;
  /** An earlier attempt may have been processed. */
  uncertain: boolean;
  deadline: number;
}

/**
 * What follows a failed attempt: `delayMs` before the next one, or undefined when none follows (out of
 * retries, not retryable, a `Retry-After` above the cap, or too little deadline left). `conflict`: a 409
 * that no earlier attempt explains (another request owns the key): looked up once, then thrown, never retried.
 * A failure that may have been processed is retried only by an idempotent call (its key's replay is its own
 * record); a 409 then means "still pending" and is retried too.
 */
export function retryPlan(
  f: FailedAttempt,
  c: CallSoFar,
  now: number,
  random: () => number = Math.random,
): { delayMs: number | undefined; conflict: boolean } {
  const conflict = f.status === 409 && !c.uncertain && !c.freshKey;
  const allowed = f.processed ? c.idempotent && (f.retryable || f.status === 409) : f.retryable;
  if (c.attempt > c.maxRetries || conflict || !allowed) return { delayMs: undefined, conflict };
  const retry = c.attempt - 1;
  let delayMs: number | undefined;
  if (f.retryAfterMs !== undefined) {
    // never less than the backoff ceiling: a Retry-After of 0, -5 or a past date would retry at once
    delayMs =
      f.retryAfterMs > RETRY_AFTER_CAP_MS ? undefined : Math.max(f.retryAfterMs, backoffCeiling(retry));
  } else delayMs = backoffDelay(retry, random);
  if (delayMs !== undefined && !fitsDeadline(now, delayMs, c.deadline)) delayMs = undefined;
  return { delayMs, conflict };
}

/**
 * What a call that may have created its message ends with when it has no result: `send-uncertain`
 * (`EmailSendUncertainError`, a send with a key), `batch-uncertain` (`EmailBatchUncertainError`, when its
 * last failure left it ambiguous: timeout, broken connection, 409 or 5xx), else the last failure itself.
 */
export function uncertainEnd(c: {
  createsMessage: boolean;
  uncertain: boolean;
  conflict: boolean;
  batch: boolean;
  ambiguous: boolean;
  hasKey: boolean;
}): 'error' | 'send-uncertain' | 'batch-uncertain' {
  if (!c.createsMessage || !c.uncertain || c.conflict) return 'error';
  if (c.batch) return c.ambiguous ? 'batch-uncertain' : 'error';
  return c.hasKey ? 'send-uncertain' : 'error';
}

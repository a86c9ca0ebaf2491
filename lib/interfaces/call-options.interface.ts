/**
 * Options every call accepts.
 * @publicApi
 */
export interface CallOptions {
  /** Ends the call (and any backoff sleep) when aborted. */
  signal?: AbortSignal;
  /** Deadline of the whole call in milliseconds, retries included. @default the module's `timeoutMs` */
  timeoutMs?: number;
  /** Retries after the first attempt. @default the module's `maxRetries` */
  maxRetries?: number;
  /**
   * The account the call is made for (the module's `accounts` resolver finds its key): its records,
   * identical sends and limits are its own. @default the module's own `apiKey`
   */
  account?: string;
}

/**
 * Options of `EmailService.send`.
 * @publicApi
 */
export interface SendOptions extends CallOptions {
  /**
   * Key sent as `Idempotency-Key`: 16 to 128 characters of letters, digits, `_`, `:` and `-`.
   * Derive it from something stable (a job id) so that a re-run of the same job cannot send twice.
   * @default generated once per call when the module's `idempotency` is `'auto'`
   */
  idempotencyKey?: string;
  /**
   * Look the message up in the log when an attempt may have created it (a record is adopted only
   * when its content proves it is this call's own). `false` leaves the settling to the key's replay:
   * what a worker that shares no state with other processes wants.
   * @default the module's `reconcile`
   */
  reconcile?: boolean;
}

/**
 * Options of `EmailService.list`.
 * @publicApi
 */
export interface ListOptions extends CallOptions {
  /** 1 to 100. @default 50 (the service's default) */
  limit?: number;
}

/**
 * Options of `EmailService.findSent`.
 * @publicApi
 */
export interface FindSentOptions extends CallOptions {
  /** Only messages created at or after this time (less a small clock-skew allowance) match. */
  since: Date;
}

/** Deadline, budget and signal of one call, fixed once when it is checked and shared by all of its attempts. */
export interface CallContext {
  /** Epoch ms after which the call is abandoned. */
  deadline: number;
  /** The budget the deadline came from, for error messages. */
  timeoutMs: number;
  /** The caller's signal. */
  signal?: AbortSignal;
}

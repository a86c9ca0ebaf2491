/**
 * What a failed send tells about the message:
 * - `'not-sent'`: the service cannot have created a message; sending again is safe.
 * - `'uncertain'`: a message may or may not exist; look it up (or retry with the same idempotency key).
 * @publicApi
 */
export type SendOutcome = 'not-sent' | 'uncertain';

/** Options shared by every error of this package. */
export interface EmailErrorOptions {
  /** Whether trying the same call again may succeed. */
  retryable?: boolean;
  /** For sends: whether a message can exist. */
  outcome?: SendOutcome;
  /** The underlying error, when there is one. */
  cause?: unknown;
}

/**
 * Base class of every error thrown by this package.
 *
 * @example
 * try { await email.send(input); } catch (e) { if (e instanceof EmailError && e.retryable) retryLater(); }
 * @publicApi
 */
export class EmailError extends Error {
  /** Whether trying the same call again may succeed. */
  readonly retryable: boolean;
  /** For sends: `'not-sent'` when no message can exist, `'uncertain'` otherwise. Undefined for reads. */
  readonly outcome?: SendOutcome;

  constructor(message: string, options: EmailErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.retryable = options.retryable ?? false;
    if (options.outcome !== undefined) this.outcome = options.outcome;
  }

  /** A plain, secret-free description, suitable for structured logs. */
  toJSON(): Record<string, unknown> {
    const json: Record<string, unknown> = {
      name: this.name,
      message: this.message,
      retryable: this.retryable,
    };
    if (this.outcome !== undefined) json.outcome = this.outcome;
    for (const key of Object.keys(this)) {
      if (key === 'cause' || key in json) continue;
      json[key] = (this as Record<string, unknown>)[key];
    }
    return json;
  }
}

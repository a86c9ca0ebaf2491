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
 * The mark our errors carry on their prototype. `Symbol.for` gives the same symbol to every copy of
 * this package loaded in one process (its ES module build and its CommonJS build).
 */
const BRAND = Symbol.for('nestjs-transactional-email.error');

/**
 * True when `value` is one of our errors, from any copy of the package, whose class, or a class it
 * extends, is named `name` and is itself one of our error classes.
 */
function isBrandedAs(value: unknown, name: string): boolean {
  if (typeof value !== 'object' || value === null || (value as Record<symbol, unknown>)[BRAND] !== true)
    return false;
  for (let proto = Object.getPrototypeOf(value); proto !== null; proto = Object.getPrototypeOf(proto)) {
    const ctor: unknown = Object.hasOwn(proto, 'constructor') ? proto.constructor : undefined;
    if (typeof ctor === 'function' && ctor.name === name && proto[BRAND] === true) return true;
  }
  return false;
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

  /**
   * `instanceof` that holds across the package's two builds: should an app load both the ES module
   * and the CommonJS build, an error thrown by one is still `instanceof` the same class of the other
   * (matched by class name along the error's own class chain). Within one build it is plain `instanceof`.
   */
  static override [Symbol.hasInstance]<T extends abstract new (...args: never[]) => unknown>(
    this: T,
    value: unknown,
  ): value is InstanceType<T> {
    return Function.prototype[Symbol.hasInstance].call(this, value) || isBrandedAs(value, this.name);
  }

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

Object.defineProperty(EmailError.prototype, BRAND, { value: true });

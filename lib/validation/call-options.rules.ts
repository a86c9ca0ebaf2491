/**
 * The options every call takes (`timeoutMs`, `maxRetries`, `signal`), checked once per call by each
 * input kind's rules (`send.rules`, `batch.rules`, `query.rules`), and what they share.
 */
import { EmailValidationError, type EmailValidationIssue } from '../errors/email-validation.error.js';
import type { CallContext, CallOptions } from '../interfaces/call-options.interface.js';
import type { ResolvedEmailOptions } from '../interfaces/email-module-options.interface.js';

/** What every checked call carries: its deadline and signal, and how many retries it may make. */
export interface CheckedCall {
  ctx: CallContext;
  maxRetries: number;
}

/** A control character (NUL included) or a lone surrogate: no store keeps them as they are (Redis, PostgreSQL text). */
const UNSTORABLE = /[\p{Cc}]|\p{Cs}/u;

/**
 * The one rule of an id the module stores and puts in keys (a job id, an account id): a string of 1 to
 * `maxLength` characters that every store keeps as it is. Undefined when `id` is fine, else what is wrong.
 */
export function storableIdProblem(id: unknown, maxLength: number): string | undefined {
  if (typeof id !== 'string' || id === '' || id.length > maxLength)
    return `must be a non-empty string of at most ${maxLength} characters`;
  if (UNSTORABLE.test(id)) return 'must not hold control characters (NUL included) or lone surrogates';
  return undefined;
}

/** The longest account id (`{ account }`): it names Redis keys and rows. */
export const ACCOUNT_ID_MAX_LENGTH = 256;

/** What is wrong with an account id (`{ account }` of any call), or undefined. */
export function accountIdProblem(id: unknown): string | undefined {
  const problem = storableIdProblem(id, ACCOUNT_ID_MAX_LENGTH);
  return problem === undefined ? undefined : `an account id ${problem}`;
}

/** A value as an error message shows it: strings quoted, so `"5"` and `5` differ. */
export function describeValue(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

/** Sets `defaultFrom` on an email snapshot that has no `from` (the snapshot is ours). */
export function withDefaultFrom(value: unknown, from: string | undefined): unknown {
  if (from === undefined || typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const email = value as Record<string, unknown>;
  if (email.from === undefined) email.from = from; // the snapshot is ours: set in place
  return value;
}

/** Checks the options every call takes (`timeoutMs`, `maxRetries`) and fixes the call's deadline from `now`. */
export function callOf(
  options: CallOptions,
  resolved: ResolvedEmailOptions,
  issues: EmailValidationIssue[],
  now: number = Date.now(),
): CheckedCall {
  const timeoutMs = options.timeoutMs ?? resolved.timeoutMs;
  if (!(typeof timeoutMs === 'number' && Number.isFinite(timeoutMs) && timeoutMs > 0)) {
    issues.push({
      path: 'timeoutMs',
      message: `must be a positive number (got ${describeValue(timeoutMs)})`,
    });
  }
  const { maxRetries } = options;
  if (maxRetries !== undefined && !(Number.isInteger(maxRetries) && maxRetries >= 0)) {
    issues.push({
      path: 'maxRetries',
      message: `must be an integer of 0 or more (got ${describeValue(maxRetries)})`,
    });
  }
  return {
    ctx: { deadline: now + timeoutMs, timeoutMs, signal: options.signal },
    maxRetries: maxRetries ?? resolved.maxRetries,
  };
}

/** Throws one `EmailValidationError` listing every problem found, if any. */
export function done(issues: EmailValidationIssue[]): void {
  if (issues.length > 0) throw new EmailValidationError(issues);
}

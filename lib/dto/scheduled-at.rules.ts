import type { EmailValidationIssue } from '../errors/email-validation.error.js';
import { parseDateTime } from './date-time.rules.js';
import { isDate } from './email-field.rules.js';
import { MAX_SCHEDULE_AHEAD_MS } from './email-rules.constants.js';
import { messages } from './email-rules.messages.js';

/**
 * Epoch ms of a `scheduledAt` value (a `Date` or an RFC 3339 date-time string), or `NaN` when it is neither.
 */
export function scheduledTime(value: unknown): number {
  if (typeof value === 'string') return parseDateTime(value);
  if (isDate(value)) return value.getTime();
  return NaN;
}

/**
 * `scheduledAt`: null, a valid `Date`, or an RFC 3339 date-time with a timezone; at most
 * {@link MAX_SCHEDULE_AHEAD_MS} after `nowMs` (inclusive, no tolerance). A past time is fine: it sends at once.
 */
export function checkScheduledAt(
  value: unknown,
  prefix: string,
  nowMs: number,
  issues: EmailValidationIssue[],
): void {
  if (value === undefined || value === null) return;
  const path = `${prefix}scheduledAt`;
  const time = scheduledTime(value);
  if (Number.isNaN(time)) {
    const message = isDate(value) ? messages.scheduledInvalidDate(path) : messages.scheduledType(path);
    issues.push({ path, message });
  } else if (time - nowMs > MAX_SCHEDULE_AHEAD_MS) {
    const latest = new Date(nowMs + MAX_SCHEDULE_AHEAD_MS).toISOString();
    issues.push({ path, message: messages.scheduledTooFar(path, latest) });
  }
}

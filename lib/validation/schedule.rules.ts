import type { EmailValidationIssue } from '../errors/email-validation.error.js';
import { isDate } from './content.rules.js';
import { MAX_SCHEDULE_AHEAD_MS, messages } from './validation.constants.js';

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

const DAY_MS = 86_400_000;
/** Days in 400 Gregorian years; shifting by it keeps the calendar identical. */
const FOUR_CENTURIES_DAYS = 146_097;

function digits(s: string, at: number, count: number): number {
  let value = 0;
  for (let i = at; i < at + count; i++) {
    const d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    value = value * 10 + d;
  }
  return value;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

function offsetMs(s: string, at: number): number {
  const sign = s.charCodeAt(at);
  if (sign === 90 || sign === 122) return at + 1 === s.length ? 0 : NaN;
  if ((sign !== 43 && sign !== 45) || at + 6 !== s.length || s.charCodeAt(at + 3) !== 58) return NaN;
  const hours = digits(s, at + 1, 2);
  const minutes = digits(s, at + 4, 2);
  if (hours < 0 || hours > 23 || minutes < 0 || minutes > 59) return NaN;
  return (sign === 43 ? 1 : -1) * (hours * 60 + minutes) * 60_000;
}

/**
 * Parses an RFC 3339 date-time (`2030-01-31T09:00:00Z`, `2030-01-31T10:00:00.250+01:00`) into epoch
 * milliseconds; `NaN` when the text is not one. Seconds and a timezone (`Z` or `±hh:mm`) are required;
 * fractions beyond milliseconds are truncated; calendar dates are checked (no 31 April, no 29 February 2031).
 *
 * @example
 * parseDateTime('1970-01-01T00:00:01Z') // 1000
 */
export function parseDateTime(s: string): number {
  if (s.length < 20) return NaN;
  const year = digits(s, 0, 4);
  const month = digits(s, 5, 2);
  const day = digits(s, 8, 2);
  const hour = digits(s, 11, 2);
  const minute = digits(s, 14, 2);
  const second = digits(s, 17, 2);
  const t = s.charCodeAt(10);
  if (s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || (t !== 84 && t !== 116)) return NaN;
  if (s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58) return NaN;
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return NaN;
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return NaN;
  let at = 19;
  let ms = 0;
  if (s.charCodeAt(at) === 46) {
    const first = ++at;
    let d = s.charCodeAt(at) - 48;
    while (d >= 0 && d <= 9) {
      if (at - first < 3) ms = ms * 10 + d;
      d = s.charCodeAt(++at) - 48;
    }
    const count = at - first;
    if (count === 0) return NaN;
    if (count < 3) ms *= count === 1 ? 100 : 10;
  }
  const offset = offsetMs(s, at);
  if (Number.isNaN(offset)) return NaN;
  // Date.UTC maps years 0-99 to 1900-1999; shift such years by 400 and back.
  const shift = year < 100 ? FOUR_CENTURIES_DAYS * DAY_MS : 0;
  const y = year < 100 ? year + 400 : year;
  return Date.UTC(y, month - 1, day, hour, minute, second, ms) - shift - offset;
}

import { EmailValidationError, type EmailValidationIssue } from '../errors/email-validation.error.js';
import { checkScheduledAt } from '../validation/schedule.rules.js';

/**
 * Options of {@link scheduleAt} and {@link scheduleIn}.
 * @publicApi
 */
export interface ScheduleOptions {
  /** The clock to measure the 30-day horizon against. @default new Date() */
  now?: Date;
}

/**
 * Turns a `Date` (or epoch milliseconds) into the RFC 3339 UTC string `scheduledAt` carries, after checking
 * it is a real date at most 30 days ahead. (`scheduledAt` also takes a `Date` as is; this checks early.)
 *
 * @throws EmailValidationError for an invalid date or one more than 30 days ahead.
 * @example
 * await email.send({ ...mail, scheduledAt: scheduleAt(new Date('2030-01-31T09:00:00Z')) });
 * @publicApi
 */
export function scheduleAt(when: Date | number, options: ScheduleOptions = {}): string {
  const date = typeof when === 'number' ? new Date(when) : when;
  const issues: EmailValidationIssue[] = [];
  checkScheduledAt(date, '', (options.now ?? new Date()).getTime(), issues);
  if (issues.length > 0) throw new EmailValidationError(issues);
  return date.toISOString();
}

/**
 * `scheduledAt` for a moment `delayMs` from now (at most 30 days).
 *
 * @example
 * await email.send({ ...mail, scheduledAt: scheduleIn(60 * 60 * 1000) }); // in one hour
 * @publicApi
 */
export function scheduleIn(delayMs: number, options: ScheduleOptions = {}): string {
  const now = options.now ?? new Date();
  return scheduleAt(now.getTime() + delayMs, { now });
}

import type { EmailSuppressionHealth } from '../interfaces/suppression.interface.js';

export type { EmailSuppressionHealth };

/**
 * Why the email service was reported down.
 * @publicApi
 */
export type EmailHealthReason =
  | 'unauthorized'
  | 'forbidden'
  | 'unavailable'
  | 'timeout'
  | 'unreachable'
  | 'error'
  /** The service answered, but the suppression list's shared store (Redis, PostgreSQL) did not. */
  | 'suppression-store';

/**
 * Options of `EmailHealthIndicator.isHealthy`.
 * @publicApi
 */
export interface EmailHealthCheckOptions {
  /**
   * Deadline of the check in milliseconds. The check makes one request and never retries.
   * @default 3000
   */
  timeoutMs?: number;
  /**
   * Check the service with this account's key (a module with `accounts`). @default the module's own `apiKey`
   */
  account?: string;
}

/**
 * What the indicator reports under its key when the service answered.
 * @publicApi
 */
export interface EmailHealthUp {
  status: 'up';
  /** Time the authenticated read took, in milliseconds. */
  latencyMs: number;
  suppression?: EmailSuppressionHealth;
}

/**
 * What the indicator reports under its key when the service did not answer as it should.
 * @publicApi
 */
export interface EmailHealthDown {
  status: 'down';
  reason: EmailHealthReason;
  /** A short, secret-free explanation. */
  message: string;
  /** HTTP status the service answered with, when it answered. */
  statusCode?: number;
  /** Time until the check gave up or failed, in milliseconds. */
  latencyMs: number;
  suppression?: EmailSuppressionHealth;
}

/**
 * The indicator's result, in the shape `@nestjs/terminus` expects from a health indicator:
 * `{ [key]: { status: 'up' | 'down', ...details } }`.
 * @publicApi
 */
export type EmailHealthResult<Key extends string = string> = Record<Key, EmailHealthUp | EmailHealthDown>;

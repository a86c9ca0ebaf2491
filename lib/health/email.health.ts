import { Inject, Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { healthIndicatorServiceOf } from '../peers/optional-peer.loader.js';
import { EmailService } from '../service/email.service.js';
import { EmailAccountError } from '../errors/email-account.error.js';
import type {
  EmailHealthCheckOptions,
  EmailHealthDown,
  EmailHealthResult,
} from './email-health.interface.js';
import { EmailApiError, EmailAuthenticationError, EmailForbiddenError } from '../errors/email-api.error.js';
import {
  EmailAbortError,
  EmailConnectionError,
  EmailTimeoutError,
  EmailUnexpectedResponseError,
} from '../errors/email-transport.error.js';

/** Reason and explanation of a failed check; never includes the API key or the service's own texts. */
type EmailHealthFailure = Pick<EmailHealthDown, 'reason' | 'message' | 'statusCode'>;

/** Classifies the error of the health check's read (its deadline is the service's own `timeoutMs`). */
function healthFailureOf(err: unknown, timeoutMs: number): EmailHealthFailure {
  if (err instanceof EmailTimeoutError || err instanceof EmailAbortError) {
    return { reason: 'timeout', message: `the email service did not answer within ${timeoutMs} ms` };
  }
  if (err instanceof EmailAuthenticationError) {
    return { reason: 'unauthorized', message: 'the email service refused the API key', statusCode: 401 };
  }
  if (err instanceof EmailForbiddenError) {
    return { reason: 'forbidden', message: 'the API key may not list emails', statusCode: 403 };
  }
  if (err instanceof EmailApiError) {
    return {
      reason: 'unavailable',
      message: `the email service answered with status ${err.status}`,
      statusCode: err.status,
    };
  }
  if (err instanceof EmailUnexpectedResponseError) {
    return {
      reason: 'unavailable',
      message: `the email service gave an answer that breaks its contract (status ${err.status})`,
      statusCode: err.status,
    };
  }
  if (err instanceof EmailConnectionError) {
    const code = err.code === undefined ? '' : ` (${err.code})`;
    return { reason: 'unreachable', message: `the email service could not be reached${code}` };
  }
  if (err instanceof EmailAccountError) return { reason: 'error', message: err.message };
  const name = err instanceof Error ? err.name : typeof err;
  return { reason: 'error', message: `the health check failed unexpectedly (${name})` };
}

/** Default deadline of one health check, in milliseconds. */
export const EMAIL_HEALTH_TIMEOUT_MS = 3_000;

/**
 * A `@nestjs/terminus` (11+) health indicator for the email service. `isHealthy` makes one cheap
 * authenticated read (a list of at most one message) under its own short deadline and without
 * retries, and reports `up` with the latency, or `down` with a reason (`unauthorized`, `forbidden`,
 * `unavailable`, `timeout`, `unreachable`). It reports down rather than throwing and never shows the key.
 *
 * `EmailModule` provides and exports it for each instance, so a health controller only needs
 * `TerminusModule` and access to `EmailModule`. `@nestjs/terminus` is loaded when `isHealthy` first
 * runs; without it installed, `isHealthy` rejects with an error that says what to install.
 *
 * @example
 * @Get('health') @HealthCheck()
 * check() {
 *   return this.health.check([() => this.email.isHealthy('email', { timeoutMs: 2000 })]);
 * }
 * @publicApi
 */
@Injectable()
export class EmailHealthIndicator {
  constructor(
    @Inject(EmailService) private readonly email: EmailService,
    @Inject(ModuleRef) private readonly moduleRef: ModuleRef,
  ) {}

  /**
   * Checks that the service answers an authenticated read.
   * @param key name of the indicator in the health report. @default 'email'
   * @param options `timeoutMs`, the deadline of the check. @default { timeoutMs: 3000 }
   */
  async isHealthy<const Key extends string = 'email'>(
    key: Key = 'email' as Key,
    options: EmailHealthCheckOptions = {},
  ): Promise<EmailHealthResult<Key>> {
    const session = (await healthIndicatorServiceOf(this.moduleRef, 'EmailHealthIndicator')).check(key);
    const started = performance.now();
    const latencyMs = (): number => Math.round(performance.now() - started);
    const timeoutMs = options.timeoutMs ?? EMAIL_HEALTH_TIMEOUT_MS;
    if (!(typeof timeoutMs === 'number' && Number.isFinite(timeoutMs) && timeoutMs > 0)) {
      const message = `timeoutMs must be a positive number (got ${String(timeoutMs)})`;
      return session.down({ reason: 'error', message, latencyMs: 0 }) as EmailHealthResult<Key>;
    }
    const { suppressions } = this.email;
    const [failure, suppression] = await Promise.all([
      this.probe(timeoutMs, options.account),
      suppressions.health(),
    ]);
    const list = suppression === undefined ? {} : { suppression };
    if (failure === undefined && suppression?.status !== 'down')
      return session.up({ latencyMs: latencyMs(), ...list }) as EmailHealthResult<Key>;
    const down = failure ?? {
      reason: 'suppression-store' as const,
      message: `the suppression list's store (${suppression!.store}) does not answer: ${
        suppressions.whenStoreDown === 'refuse'
          ? 'sends are refused until it does'
          : 'sends go on from the list as this process last knew it'
      }`,
    };
    return session.down({ ...down, latencyMs: latencyMs(), ...list }) as EmailHealthResult<Key>;
  }

  /**
   * One list of at most one message under the service's own deadline (`timeoutMs`, no retry): the
   * transport ends it at the deadline whatever stage it is in. Resolves to undefined when it worked.
   */
  private async probe(
    timeoutMs: number,
    account: string | undefined,
  ): Promise<EmailHealthFailure | undefined> {
    try {
      await this.email.list(
        account === undefined
          ? { limit: 1, timeoutMs, maxRetries: 0 }
          : { limit: 1, timeoutMs, maxRetries: 0, account },
      );
      return undefined;
    } catch (err) {
      return healthFailureOf(err, timeoutMs);
    }
  }
}

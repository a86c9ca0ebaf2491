import { EmailService } from '../service/email.service.js';
import { EmailHealthIndicator } from '../health/email.health.js';

const PREFIX = 'nestjs-transactional-email';

/** Throws unless `name` can name a module instance. */
export function assertInstanceName(name: unknown): asserts name is string | undefined {
  if (name !== undefined && (typeof name !== 'string' || name.trim() === '')) {
    throw new TypeError(`EmailModule instance name must be a non-empty string (got ${JSON.stringify(name)})`);
  }
}

/**
 * The injection token of the `EmailService` of one `EmailModule` instance: the `EmailService` class
 * for the default (unnamed) instance, a string for a named one.
 *
 * @example
 * moduleRef.get(getEmailServiceToken('marketing'))
 * @publicApi
 */
export function getEmailServiceToken(name?: string): string | typeof EmailService {
  assertInstanceName(name);
  return name === undefined ? EmailService : `${PREFIX}:EmailService(${name})`;
}

/**
 * The injection token of the `EmailHealthIndicator` bound to one `EmailModule` instance: the class for
 * the default instance, a string for a named one.
 *
 * @example
 * constructor(@Inject(getEmailHealthIndicatorToken('marketing')) private readonly marketing: EmailHealthIndicator) {}
 * @publicApi
 */
export function getEmailHealthIndicatorToken(name?: string): string | typeof EmailHealthIndicator {
  assertInstanceName(name);
  return name === undefined ? EmailHealthIndicator : `${PREFIX}:EmailHealthIndicator(${name})`;
}

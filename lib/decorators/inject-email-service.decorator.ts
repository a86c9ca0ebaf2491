import { Inject } from '@nestjs/common';
import { getEmailHealthIndicatorToken, getEmailServiceToken } from './email-instance.tokens.js';

/**
 * Injects the `EmailService` of the `EmailModule` instance registered with `forRoot({ name })`.
 * Without a name it injects the default instance, like a plain `EmailService` parameter.
 *
 * @example
 * constructor(
 *   private readonly email: EmailService,                                  // default instance
 *   @InjectEmailService('marketing') private readonly marketing: EmailService,
 * ) {}
 * @publicApi
 */
export function InjectEmailService(name?: string): PropertyDecorator & ParameterDecorator {
  return Inject(getEmailServiceToken(name));
}

/**
 * Injects the `EmailHealthIndicator` bound to the `EmailModule` instance registered with `forRoot({ name })`.
 *
 * @example
 * constructor(@InjectEmailHealthIndicator('marketing') private readonly marketing: EmailHealthIndicator) {}
 * @publicApi
 */
export function InjectEmailHealthIndicator(name?: string): PropertyDecorator & ParameterDecorator {
  return Inject(getEmailHealthIndicatorToken(name));
}

import type { DynamicModule, Provider } from '@nestjs/common';
import { getEmailHealthIndicatorToken, getEmailServiceToken } from './decorators/email-instance.tokens.js';
import { EmailService } from './service/email.service.js';
import { EmailHealthIndicator } from './health/email.health.js';

/**
 * What one `EmailModule` instance exports. The default instance exports the `EmailService` and
 * `EmailHealthIndicator` classes; a named one exports only its own tokens, so that several instances
 * can live in one application without shadowing each other or the default one.
 */
export function withInstanceExports(definition: DynamicModule, name: string | undefined): DynamicModule {
  if (name === undefined) {
    return { ...definition, exports: [...(definition.exports ?? []), EmailService, EmailHealthIndicator] };
  }
  const aliases: Provider[] = [
    { provide: getEmailServiceToken(name), useExisting: EmailService },
    { provide: getEmailHealthIndicatorToken(name), useExisting: EmailHealthIndicator },
  ];
  return {
    ...definition,
    providers: [...(definition.providers ?? []), ...aliases],
    exports: [...(definition.exports ?? []), ...aliases.map((a) => (a as { provide: string }).provide)],
  };
}

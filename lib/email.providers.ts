import type { Provider } from '@nestjs/common';
import { resolveEmailOptions } from './config/email-options.resolver.js';
import { EMAIL_API_CLIENT, EMAIL_RESOLVED_OPTIONS, EMAIL_TRANSPORT } from './config/email.constants.js';
import { emailTelemetryProviders } from './email-telemetry.providers.js';
import { EMAIL_MODULE_OPTIONS } from './email.module-definition.js';
import { EmailApiClient } from './http/email-api.client.js';
import { EmailTransport } from './http/email.transport.js';
import type {
  EmailModuleOptions,
  ResolvedEmailOptions,
} from './interfaces/email-module-options.interface.js';

/** Redacts every occurrence of `secret` from texts the service sent back. */
function redactorFor(secret: string): (text: string) => string {
  return (text) =>
    secret.length > 0 && text.includes(secret) ? text.split(secret).join('[redacted]') : text;
}

const API_KEY = Symbol('nestjs-transactional-email:api-key');

/** The internal providers of one module instance. */
export const emailProviders: Provider[] = [
  {
    provide: EMAIL_RESOLVED_OPTIONS,
    useFactory: (options: EmailModuleOptions) => resolveEmailOptions(options),
    inject: [EMAIL_MODULE_OPTIONS],
  },
  {
    // Read the key once, after the options were checked, into a function rather than a visible value.
    provide: API_KEY,
    useFactory: (options: EmailModuleOptions) => {
      const key = options.apiKey;
      return () => key;
    },
    inject: [EMAIL_MODULE_OPTIONS, EMAIL_RESOLVED_OPTIONS],
  },
  {
    provide: EMAIL_TRANSPORT,
    useFactory: (resolved: ResolvedEmailOptions, key: () => string) => new EmailTransport(resolved, key()),
    inject: [EMAIL_RESOLVED_OPTIONS, API_KEY],
  },
  ...emailTelemetryProviders,
  {
    provide: EMAIL_API_CLIENT,
    useFactory: (transport: EmailTransport, key: () => string) =>
      new EmailApiClient(transport, redactorFor(key())),
    inject: [EMAIL_TRANSPORT, API_KEY],
  },
];

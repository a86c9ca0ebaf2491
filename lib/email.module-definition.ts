import { ConfigurableModuleBuilder, type DynamicModule, type Provider } from '@nestjs/common';
import { keyHiddenCopy } from './config/secret-safe.options.js';
import { EmailHealthIndicator } from './health/email.health.js';
import type { EmailModuleOptions } from './interfaces/email-module-options.interface.js';
import { EmailService } from './service/email.service.js';
import { EmailSuppressions } from './suppression/email-suppressions.service.js';

/**
 * Options only `forRoot`/`forRootAsync` understand; not passed to the service.
 * @publicApi
 */
export interface EmailModuleExtras {
  /** Register the module globally, so that feature modules need not import it. @default false */
  isGlobal?: boolean;
  /**
   * Name of this instance, to use several (for example one key per sending domain) in one application.
   * A named instance exports `getEmailServiceToken(name)` (inject with `@InjectEmailService(name)`) and
   * `getEmailHealthIndicatorToken(name)` instead of the classes; the unnamed instance is the default one.
   * @default undefined (the default instance)
   * @example
   * EmailModule.forRoot({ name: 'marketing', apiKey: process.env.MARKETING_EMAIL_API_KEY!, baseUrl })
   */
  name?: string;
}

const PREFIX = 'nestjs-transactional-email';

/** Throws unless `name` can name a module instance. */
function assertInstanceName(name: unknown): asserts name is string | undefined {
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
 */
export function getEmailHealthIndicatorToken(name?: string): string | typeof EmailHealthIndicator {
  assertInstanceName(name);
  return name === undefined ? EmailHealthIndicator : `${PREFIX}:EmailHealthIndicator(${name})`;
}

/**
 * What one instance exports. The default instance exports the `EmailService`, `EmailHealthIndicator` and
 * `EmailSuppressions` classes; a named one only its own string tokens, so that instances never shadow each
 * other (its suppression list is its service's `suppressions`).
 */
function withInstanceExports(definition: DynamicModule, name: string | undefined): DynamicModule {
  if (name === undefined) {
    const exported = [EmailService, EmailHealthIndicator, EmailSuppressions];
    return { ...definition, exports: [...(definition.exports ?? []), ...exported] };
  }
  const aliases = [
    { provide: getEmailServiceToken(name), useExisting: EmailService },
    { provide: getEmailHealthIndicatorToken(name), useExisting: EmailHealthIndicator },
  ];
  return {
    ...definition,
    providers: [...(definition.providers ?? []), ...aliases],
    exports: [...(definition.exports ?? []), ...aliases.map((a) => a.provide)],
  };
}

/** The options provider keeps a copy whose key does not show when the module or the app is inspected. */
function hideKey(provider: Provider): Provider {
  if (typeof provider !== 'object' || provider.provide !== EMAIL_MODULE_OPTIONS) return provider;
  if ('useValue' in provider)
    return { ...provider, useValue: keyHiddenCopy(provider.useValue as EmailModuleOptions) };
  if ('useFactory' in provider) {
    const factory = provider.useFactory;
    return {
      ...provider,
      useFactory: async (...args: unknown[]) => keyHiddenCopy((await factory(...args)) as EmailModuleOptions),
    };
  }
  return provider;
}

/** `forRoot(options)` and `forRootAsync({ imports, inject, useFactory | useClass | useExisting })`, with the extras. */
export const {
  ConfigurableModuleClass: EmailConfigurableModule,
  MODULE_OPTIONS_TOKEN: EMAIL_MODULE_OPTIONS,
} = new ConfigurableModuleBuilder<EmailModuleOptions>({ moduleName: 'Email' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createEmailOptions')
  .setExtras<EmailModuleExtras>({ isGlobal: false, name: undefined }, (definition, extras) => {
    assertInstanceName(extras.name);
    const providers = (definition.providers ?? []).map(hideKey);
    return withInstanceExports({ ...definition, providers, global: extras.isGlobal === true }, extras.name);
  })
  .build();

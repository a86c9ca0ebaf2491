import { ConfigurableModuleBuilder, type Provider } from '@nestjs/common';
import { keyHiddenCopy } from './config/secret-safe.options.js';
import { assertInstanceName } from './decorators/email-instance.tokens.js';
import { withInstanceExports } from './email-instance.providers.js';
import type { EmailModuleOptions } from './interfaces/email-module-options.interface.js';

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

export const {
  ConfigurableModuleClass: EmailConfigurableModule,
  MODULE_OPTIONS_TOKEN: EMAIL_MODULE_OPTIONS,
  OPTIONS_TYPE: EMAIL_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: EMAIL_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<EmailModuleOptions>({ moduleName: 'Email' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createEmailOptions')
  .setExtras<EmailModuleExtras>({ isGlobal: false, name: undefined }, (definition, extras) => {
    assertInstanceName(extras.name);
    const providers = (definition.providers ?? []).map(hideKey);
    return withInstanceExports({ ...definition, providers, global: extras.isGlobal === true }, extras.name);
  })
  .build();

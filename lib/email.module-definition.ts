import { ConfigurableModuleBuilder } from '@nestjs/common';
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
    return withInstanceExports({ ...definition, global: extras.isGlobal === true }, extras.name);
  })
  .build();

import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { EmailModuleOptions } from './interfaces/email-module-options.interface.js';

/** Options only `forRoot`/`forRootAsync` understand; not passed to the service. */
export interface EmailModuleExtras {
  /** Register the module globally, so that feature modules need not import it. @default false */
  isGlobal?: boolean;
}

export const {
  ConfigurableModuleClass: EmailConfigurableModule,
  MODULE_OPTIONS_TOKEN: EMAIL_MODULE_OPTIONS,
  OPTIONS_TYPE: EMAIL_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: EMAIL_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<EmailModuleOptions>({ moduleName: 'Email' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createEmailOptions')
  .setExtras<EmailModuleExtras>({ isGlobal: false }, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal === true,
  }))
  .build();

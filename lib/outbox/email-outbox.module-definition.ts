import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { EmailOutboxOptions } from './email-outbox.options.js';

/**
 * Options only `forRoot`/`forRootAsync` understand.
 * @publicApi
 */
export interface EmailOutboxModuleExtras {
  /** Register `EmailOutbox` globally, so that feature modules need not import the module. @default false */
  isGlobal?: boolean;
}

/** The outbox module built like `EmailQueueModule`: `forRoot(options)` and `forRootAsync({ imports, inject, useFactory | useClass | useExisting })`. */
export const {
  ConfigurableModuleClass: EmailOutboxConfigurableModule,
  MODULE_OPTIONS_TOKEN: EMAIL_OUTBOX_RAW_OPTIONS,
} = new ConfigurableModuleBuilder<EmailOutboxOptions>({ moduleName: 'EmailOutbox' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createEmailOutboxOptions')
  .setExtras<EmailOutboxModuleExtras>({ isGlobal: false }, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal === true,
  }))
  .build();

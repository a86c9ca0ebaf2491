import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { EmailQueueOptions } from './email-queue.options.js';

/**
 * Options only `forRoot`/`forRootAsync` understand.
 * @publicApi
 */
export interface EmailQueueModuleExtras {
  /** Register `EmailQueue` globally, so that feature modules need not import the module. @default false */
  isGlobal?: boolean;
}

/** The queue module built like `EmailModule`: `forRoot(options)` and `forRootAsync({ imports, inject, useFactory | useClass | useExisting })`. */
export const {
  ConfigurableModuleClass: EmailQueueConfigurableModule,
  MODULE_OPTIONS_TOKEN: EMAIL_QUEUE_RAW_OPTIONS,
} = new ConfigurableModuleBuilder<EmailQueueOptions>({ moduleName: 'EmailQueue' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createEmailQueueOptions')
  .setExtras<EmailQueueModuleExtras>({ isGlobal: false }, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal === true,
  }))
  .build();

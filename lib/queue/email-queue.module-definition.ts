import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { EmailQueueOptions } from './email-queue.options.js';

/** The queue module built like `EmailModule`: `forRoot(options)` and `forRootAsync({ imports, inject, useFactory | useClass | useExisting })`. */
export const {
  ConfigurableModuleClass: EmailQueueConfigurableModule,
  MODULE_OPTIONS_TOKEN: EMAIL_QUEUE_RAW_OPTIONS,
} = new ConfigurableModuleBuilder<EmailQueueOptions>({ moduleName: 'EmailQueue' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createEmailQueueOptions')
  .build();

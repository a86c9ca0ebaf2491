import { Module, type Provider } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { EMAIL_QUEUE_OPTIONS } from './email-queue.constants.js';
import { EMAIL_QUEUE_RAW_OPTIONS, EmailQueueConfigurableModule } from './email-queue.module-definition.js';
import type { EmailQueueOptions } from './email-queue.options.js';
import { resolveEmailQueueOptions } from './email-queue-options.resolver.js';
import { EmailQueue } from './email-queue.service.js';
import { EmailQueueHealthIndicator } from './email-queue.health.js';
import { findBullSharedConfig } from './nest-bullmq.loader.js';

/** Checked options; without a `connection`, those of `@nestjs/bullmq`'s `BullModule.forRoot` when the app has it. */
const resolved: Provider = {
  provide: EMAIL_QUEUE_OPTIONS,
  inject: [EMAIL_QUEUE_RAW_OPTIONS, ModuleRef],
  useFactory: async (raw: EmailQueueOptions | undefined, moduleRef: ModuleRef) =>
    resolveEmailQueueOptions(
      raw,
      raw?.connection === undefined ? await findBullSharedConfig(moduleRef, raw?.bullConfigKey) : undefined,
    ),
};

/**
 * Durable sending on BullMQ: registers `EmailQueue` (and `EmailQueueHealthIndicator`). Import it beside
 * `EmailModule`; it uses that module's `EmailService` (or the named instance given as `emailService`)
 * and, without a `connection` of its own, the connection of `@nestjs/bullmq`'s `BullModule.forRoot`.
 *
 * @example
 * EmailQueueModule.forRoot({ connection: process.env.REDIS_URL!, concurrency: 20 })
 * EmailQueueModule.forRootAsync({ inject: [ConfigService], useFactory: (c: ConfigService) => ({ connection: c.getOrThrow('REDIS_URL') }) })
 */
@Module({
  providers: [resolved, EmailQueue, EmailQueueHealthIndicator],
  exports: [EmailQueue, EmailQueueHealthIndicator],
})
/** @publicApi */
export class EmailQueueModule extends EmailQueueConfigurableModule {}

import { Module } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { loadNestBullMq } from '../peers/optional-peer.loader.js';
import { EMAIL_QUEUE_RAW_OPTIONS, EmailQueueConfigurableModule } from './email-queue.module-definition.js';
import {
  EmailQueueResolvedOptions,
  resolveEmailQueueOptions,
  type BullSharedConfig,
  type EmailQueueOptions,
  type ResolvedEmailQueueOptions,
} from './email-queue.options.js';
import { BullMqBackend } from './bullmq.backend.js';
import { EmailQueue } from './email-queue.service.js';
import { QueueRedis } from './queue-redis.store.js';
import { EmailQueueProcessorHost, EmailQueueWorker } from './email-queue.worker.js';
import { createEmailQueueHost } from './email-queue-host.worker.js';
import { EmailQueueHealthIndicator } from './email-queue.health.js';

/** `BullModule.forRoot(configKey?)`'s shared config when the app has `@nestjs/bullmq` and one; else undefined. */
async function bullSharedConfig(
  moduleRef: ModuleRef,
  configKey?: string,
): Promise<BullSharedConfig | undefined> {
  const nest = await loadNestBullMq();
  if (nest === undefined) return undefined;
  try {
    return (
      moduleRef.get<BullSharedConfig>(nest.getSharedConfigToken(configKey), { strict: false }) ?? undefined
    );
  } catch {
    return undefined; // no BullModule.forRoot with this key in the app
  }
}

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
  providers: [
    {
      // Checked options; without a `connection`, those of `BullModule.forRoot` when the app has it.
      provide: EmailQueueResolvedOptions,
      inject: [EMAIL_QUEUE_RAW_OPTIONS, ModuleRef],
      useFactory: async (raw: EmailQueueOptions | undefined, moduleRef: ModuleRef) =>
        resolveEmailQueueOptions(
          raw,
          raw?.connection === undefined ? await bullSharedConfig(moduleRef, raw?.bullConfigKey) : undefined,
        ),
    },
    QueueRedis,
    BullMqBackend,
    EmailQueue,
    {
      // With @nestjs/bullmq and the queue on BullModule.forRoot's config: a @Processor it finds and starts.
      provide: EmailQueueProcessorHost,
      inject: [EmailQueueResolvedOptions, EmailQueue],
      useFactory: async (o: ResolvedEmailQueueOptions, queue: EmailQueue) => {
        const nest = o.worker && o.bullModule ? await loadNestBullMq() : undefined;
        return nest ? createEmailQueueHost(nest, o, queue) : {};
      },
    },
    EmailQueueWorker,
    EmailQueueHealthIndicator,
  ],
  exports: [EmailQueue, EmailQueueWorker, EmailQueueHealthIndicator],
})
/** @publicApi */
export class EmailQueueModule extends EmailQueueConfigurableModule {}

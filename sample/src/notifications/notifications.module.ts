import { Module } from '@nestjs/common';
import { ConfigModule, type ConfigType } from '@nestjs/config';
import { EmailQueueModule } from 'nestjs-transactional-email/queue';
import { sampleConfig } from '../sample.config.js';
import { NotificationsController } from './notifications.controller.js';

/**
 * Background email on BullMQ: EmailQueue queues welcome emails in Redis; its worker sends each exactly once.
 * Exported: the tenants' emails go through the same queue (`TenantsModule`).
 */
@Module({
  imports: [
    ConfigModule.forFeature(sampleConfig),
    EmailQueueModule.forRootAsync({
      imports: [ConfigModule.forFeature(sampleConfig)],
      inject: [sampleConfig.KEY],
      useFactory: (settings: ConfigType<typeof sampleConfig>) => ({
        connection: settings.redisUrl,
        queueName: 'notifications',
        attempts: settings.maxAttempts,
        backoff: { delayMs: settings.retryDelayMs, maxDelayMs: settings.retryDelayMs * 8 },
        closeTimeoutMs: 10_000,
      }),
    }),
  ],
  controllers: [NotificationsController],
  exports: [EmailQueueModule],
})
export class NotificationsModule {}

import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { sampleConfig } from '../sample.config.js';
import { NotificationProcessor } from './notification.processor.js';
import { NotificationQueue } from './notification.queue.js';
import { NotificationWorker } from './notification.worker.js';
import { NotificationsController } from './notifications.controller.js';

/** Background email: a queue, a worker that polls it and the processor that sends one job. */
@Module({
  imports: [ConfigModule.forFeature(sampleConfig)],
  controllers: [NotificationsController],
  providers: [NotificationQueue, NotificationProcessor, NotificationWorker],
})
export class NotificationsModule {}

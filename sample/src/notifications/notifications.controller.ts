import {
  Body,
  Controller,
  Get,
  HttpCode,
  NotFoundException,
  Param,
  ParseUUIDPipe,
  Post,
} from '@nestjs/common';
import type { NotificationJob } from './notification-job.js';
import { NotificationQueue } from './notification.queue.js';
import { NotificationWorker } from './notification.worker.js';
import { QueueNotificationDto } from './queue-notification.dto.js';

/** Queues welcome notifications and reports on them; the worker sends them in the background. */
@Controller('notifications/jobs')
export class NotificationsController {
  constructor(
    private readonly queue: NotificationQueue,
    private readonly worker: NotificationWorker,
  ) {}

  /** Queues a job; answers 202 with the job (its `id` and `idempotencyKey`). */
  @Post()
  @HttpCode(202)
  enqueue(@Body() dto: QueueNotificationDto): NotificationJob {
    const job = { ...this.queue.add(dto.to, dto.name) }; // as queued, before the worker touches it
    void this.worker.drain();
    return job;
  }

  /** Every job, oldest first. */
  @Get()
  list(): NotificationJob[] {
    return this.queue.all();
  }

  /** One job: `status`, `attempts`, `messageId`, `confirmedBy`, `lastError`. */
  @Get(':id')
  get(@Param('id', new ParseUUIDPipe()) id: string): NotificationJob {
    const job = this.queue.get(id);
    if (!job) throw new NotFoundException(`no job ${id}`);
    return job;
  }
}

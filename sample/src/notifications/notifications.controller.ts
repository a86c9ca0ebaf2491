import { randomUUID } from 'node:crypto';
import {
  Body,
  Controller,
  Get,
  HttpCode,
  Inject,
  NotFoundException,
  Param,
  ParseUUIDPipe,
  Post,
} from '@nestjs/common';
import type { ConfigType } from '@nestjs/config';
import { EmailQueue, type EmailJobStatus } from 'nestjs-transactional-email/queue';
import { sampleConfig } from '../sample.config.js';
import { QueueNotificationDto } from './queue-notification.dto.js';

/** Queues welcome notifications on EmailQueue and reports on them; a worker sends them in the background. */
@Controller('notifications/jobs')
export class NotificationsController {
  constructor(
    private readonly queue: EmailQueue,
    @Inject(sampleConfig.KEY) private readonly settings: ConfigType<typeof sampleConfig>,
  ) {}

  /** Queues a job; answers 202 with its `id` and `idempotencyKey` (derived from the id). */
  @Post()
  @HttpCode(202)
  async enqueue(
    @Body() dto: QueueNotificationDto,
  ): Promise<{ id: string; idempotencyKey: string; status: 'queued' }> {
    const input = {
      from: this.settings.from,
      to: [dto.to],
      subject: `Welcome, ${dto.name}`,
      text: `Hello ${dto.name}, welcome aboard.`,
    };
    const { jobId, idempotencyKey } = await this.queue.send(input, { jobId: randomUUID() });
    return { id: jobId, idempotencyKey, status: 'queued' };
  }

  /** The last 100 jobs (BullMQ keeps the job id in its data: its own id is an escaped form). */
  @Get()
  async list(): Promise<EmailJobStatus[]> {
    const jobs = await this.queue.bullQueue.getJobs(
      ['waiting', 'active', 'delayed', 'completed', 'failed'],
      0,
      99,
    );
    const statuses = await Promise.all(jobs.map((job) => this.queue.status(String(job.data.jobId))));
    return statuses.filter((s): s is EmailJobStatus => s !== null);
  }

  /** One job: `state` (waiting, delayed, active, sent, failed), `attempts`, `messageId`, `error`. */
  @Get(':id')
  async get(@Param('id', new ParseUUIDPipe()) id: string): Promise<EmailJobStatus> {
    const status = await this.queue.status(id);
    if (!status) throw new NotFoundException(`no job ${id}`);
    return status;
  }
}

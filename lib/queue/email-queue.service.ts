import { Inject, Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { Queue } from 'bullmq';
import type { Cluster, Redis } from 'ioredis';
import type { EmailInput } from '../interfaces/email-input.interface.js';
import type {
  EmailJobCancelResult,
  EmailJobRescheduleResult,
  EmailJobSchedule,
} from '../interfaces/email-job.interface.js';
import { EmailJobs } from '../jobs/email-jobs.service.js';
import type { EngineOptionRules } from '../jobs/email-job.rules.js';
import type { DeliveredJob, JobVerdict } from '../jobs/email-job.interface.js';
import { BullMqBackend } from './bullmq.backend.js';
import type { QueueSendOptions, QueuedEmail } from './email-queue.interface.js';
import { EmailQueueResolvedOptions, type ResolvedEmailQueueOptions } from './email-queue.options.js';
import { QueueRedis } from './queue-redis.store.js';
import type { RedisDurability } from './redis-durability.policy.js';

/** BullMQ's `priority` as the queue takes it. */
const priorityRule: EngineOptionRules<QueueSendOptions> = (options, at, issues) => {
  if (options.priority !== undefined && !(Number.isInteger(options.priority) && options.priority >= 0))
    issues.push({ path: `${at}priority`, message: 'must be an integer >= 0' });
};

/**
 * Queues emails on BullMQ (Redis); the queue's worker (`EmailQueueWorker`, when `worker` is on) sends them
 * exactly once. Its events (`sent`, `failed`, `rateLimited`) report what this process's worker does.
 *
 * @example
 * constructor(private readonly emails: EmailQueue) {}
 * const { jobId } = await this.emails.send({ to: ['ada@example.com'], subject: 'Hi', text: 'Hello' }, { jobId: `welcome:${user.id}` });
 * @publicApi
 */
@Injectable()
export class EmailQueue extends EmailJobs<QueueSendOptions, never> {
  constructor(
    @Inject(EmailQueueResolvedOptions) options: ResolvedEmailQueueOptions,
    backend: BullMqBackend,
    private readonly redis: QueueRedis,
    moduleRef: ModuleRef,
  ) {
    const engine = {
      where: `queue ${options.queueName}`,
      queueName: options.queueName,
      maxInterruptions: options.maxStalledCount,
      engineRules: priorityRule,
    };
    super(engine, options, backend, moduleRef);
  }

  /** The BullMQ queue underneath (for dashboards such as Bull Board, and metrics). */
  get bullQueue(): Queue {
    return this.redis.queue;
  }

  /**
   * Queues one email. The input is checked with `EmailService.send`'s rules first; nothing is queued
   * when it is wrong. The same `jobId` queued twice with the same input is one job and one email.
   * @throws EmailValidationError for a bad input or option; EmailJobConflictError when the job id already
   * holds another input; EmailQueueUnavailableError when Redis does not take the job within `commandTimeoutMs`.
   */
  async send(input: EmailInput, options: QueueSendOptions = {}): Promise<QueuedEmail> {
    const [queued] = await this.write([{ input, options }], undefined);
    return queued as QueuedEmail;
  }

  /** Queues many single emails at once; all are checked first. */
  sendMany(items: ReadonlyArray<{ input: EmailInput; options?: QueueSendOptions }>): Promise<QueuedEmail[]> {
    return this.write(items, undefined);
  }

  /** Cancels a job no worker has taken: `{ cancelled: true }`, or `{ cancelled: false, state }` when too late. */
  cancel(jobId: string): Promise<EmailJobCancelResult> {
    return this.cancelJob(jobId, undefined);
  }

  /** Moves the start of a job no worker has taken: `{ rescheduled: true }`, or `{ rescheduled: false, state }`. */
  reschedule(jobId: string, when: EmailJobSchedule): Promise<EmailJobRescheduleResult> {
    return this.rescheduleJob(jobId, when, undefined);
  }

  /** A 429 pauses the whole queue, in every process (BullMQ's rate limit). */
  protected override pauseAll(ms: number): Promise<void> {
    return this.redis.queue.rateLimit(ms);
  }

  /** One delivery of a job by the queue's worker (`EmailQueueWorker`). @internal */
  run(job: DeliveredJob): Promise<JobVerdict> {
    return this.runJob(job);
  }

  /** Redis answers a PING (used by the health indicator). */
  ping(): Promise<void> {
    return this.redis.ping();
  }

  /** Whether this Redis keeps queued emails through a restart and under memory pressure (CONFIG GET). */
  durability(): Promise<RedisDurability> {
    return this.redis.durability();
  }

  /** A connection of the queue's own for the worker: it waits for Redis instead of failing fast. @internal */
  workerConnection(): Redis | Cluster {
    return this.redis.workerConnection();
  }
}

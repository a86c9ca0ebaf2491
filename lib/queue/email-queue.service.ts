import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { Queue } from 'bullmq';
import type { Cluster, Redis } from 'ioredis';
import { EmailError } from '../errors/email.error.js';
import type { EmailInput } from '../interfaces/email-input.interface.js';
import type {
  EmailJobCancelResult,
  EmailJobRescheduleResult,
  EmailJobSchedule,
} from '../interfaces/email-job.interface.js';
import { loadBullMq } from '../peers/optional-peer.loader.js';
import { queueConnection } from './queue-connection.helpers.js';
import { EmailJobs } from '../jobs/email-jobs.service.js';
import type { EngineOptionRules } from '../jobs/email-job.rules.js';
import type { JobVerdict } from '../jobs/email-job.interface.js';
import { findEmailService } from '../jobs/email-job.helpers.js';
import { settledBy } from '../time/clock.helpers.js';
import { BullMqBackend } from './bullmq.backend.js';
import type { QueueSendOptions, QueuedEmail } from './email-queue.interface.js';
import { EmailQueueResolvedOptions, type ResolvedEmailQueueOptions } from './email-queue.options.js';
import { checkRedisDurability, type RedisDurability } from './redis-durability.policy.js';

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
export class EmailQueue
  extends EmailJobs<QueueSendOptions, never>
  implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown
{
  private readonly logger = new Logger('EmailQueue');
  private queue!: Queue;
  /** Queues, reads and checks: fails fast while Redis is away, never replays a command. */
  private producer!: Redis | Cluster;
  private readonly connections: Array<Redis | Cluster> = [];
  private queueReady = false;
  private closeDeadline?: number;

  constructor(
    @Inject(EmailQueueResolvedOptions) private readonly options: ResolvedEmailQueueOptions,
    private readonly moduleRef: ModuleRef,
  ) {
    super({
      where: `queue ${options.queueName}`,
      queueName: options.queueName,
      commandTimeoutMs: options.commandTimeoutMs,
      limits: {
        maxAttempts: options.attempts,
        maxInterruptions: options.maxStalledCount,
        backoff: options.backoff,
      },
      engineRules: priorityRule,
    });
  }

  /** Nest lifecycle hook (connects): called by Nest, not by you. */
  onModuleInit(): void {
    const bull = loadBullMq();
    this.email = findEmailService(this.moduleRef, this.options.emailService);
    const o = this.options;
    this.producer = this.connect('producer');
    this.queue = new bull.Queue(o.queueName, {
      ...(o.prefix !== undefined ? { prefix: o.prefix } : {}),
      connection: this.producer,
    });
    this.queue.on('error', () => undefined);
    this.queue.waitUntilReady().then(
      () => (this.queueReady = true),
      () => undefined,
    );
    this.backend = new BullMqBackend(this.queue, this.producer, o, (ms) => this.connectedWithin(ms));
  }

  /** Nest lifecycle hook: warns, without holding up the boot, when the Redis would lose queued emails. */
  onApplicationBootstrap(): void {
    void (async () => {
      const ready = await settledBy(this.queue.waitUntilReady(), Date.now() + 10_000);
      if (!ready || this.closeDeadline !== undefined) return;
      const { problems } = await this.durability();
      for (const problem of problems) this.logger.warn(`Redis would lose queued emails: ${problem}`);
    })();
  }

  /** The BullMQ queue underneath (for dashboards such as Bull Board, and metrics). */
  get bullQueue(): Queue {
    return this.queue;
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
    return this.queue.rateLimit(ms);
  }

  /** One delivery of a job by the queue's worker (`EmailQueueWorker`). @internal */
  run(jobId: string): Promise<JobVerdict> {
    return this.runJob(jobId);
  }

  /** Redis answers a PING (used by the health indicator). */
  async ping(): Promise<void> {
    if (!this.producer) throw new EmailError('EmailQueue is not started');
    if (!(await this.connectedWithin(this.options.commandTimeoutMs)))
      throw new EmailError(
        `No connection to Redis within ${this.options.commandTimeoutMs} ms (${this.producer.status})`,
      );
    await this.producer.ping();
  }

  /** Whether this Redis keeps queued emails through a restart and under memory pressure (CONFIG GET). */
  durability(): Promise<RedisDurability> {
    return checkRedisDurability(this.producer);
  }

  /** A connection of the queue's own for the worker: it waits for Redis instead of failing fast. @internal */
  workerConnection(): Redis | Cluster {
    return this.connect('worker');
  }

  /** Nest lifecycle hook: closes the queue and the Redis connections, within `closeTimeoutMs` whatever Redis does. */
  async onApplicationShutdown(): Promise<void> {
    const deadline = (this.closeDeadline ??= Date.now() + this.options.closeTimeoutMs);
    if (this.queue) await settledBy(this.queue.close(), deadline);
    await Promise.all(
      this.connections.map(async (c) => {
        if (c.status === 'ready') await settledBy(c.quit(), deadline);
        // after a clean QUIT the connection has ended; disconnect() would only start another timer
        if (c.status !== 'end') c.disconnect();
      }),
    );
  }

  /** True once the producer connection is up (waiting for it at most `ms`). */
  private async connectedWithin(ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    for (;;) {
      if (this.queueReady && this.producer.status === 'ready') return true;
      if (Date.now() >= deadline || this.closeDeadline !== undefined) return false;
      await new Promise((r) => setTimeout(r, Math.min(20, Math.max(1, deadline - Date.now()))));
    }
  }

  /**
   * A connection of the queue's own (a single Redis or a Redis Cluster). The producer's refuses commands
   * while Redis is away (no offline queue) and never replays an unanswered one after a reconnect; the
   * worker's waits for Redis.
   */
  private connect(role: 'producer' | 'worker'): Redis | Cluster {
    const conn = queueConnection(this.options.connection, role, this.options.commandTimeoutMs);
    this.connections.push(conn);
    return conn;
  }
}

import { EventEmitter } from 'node:events';
import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { Job, Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { EMAIL_RESOLVED_OPTIONS } from '../config/email.constants.js';
import { validateEmailInput } from '../dto/email-input.validator.js';
import { snapshotInput } from '../dto/email-input.snapshot.js';
import { captureEmailTraceContext } from '../telemetry/trace-context.helpers.js';
import { EmailError } from '../errors/email.error.js';
import { EmailValidationError, type EmailValidationIssue } from '../errors/email-validation.error.js';
import type { EmailInput } from '../interfaces/email-input.interface.js';
import type { ResolvedEmailOptions } from '../interfaces/email-module-options.interface.js';
import type { EmailLog } from '../interfaces/email-records.interface.js';
import { EmailService } from '../service/email.service.js';
import { type BullMq, loadBullMq, loadIoRedis } from './bullmq.loader.js';
import { processEmailJob } from './email-job.processor.js';
import { BACKOFF_NAME, EMAIL_QUEUE_OPTIONS, SEND_JOB_NAME } from './email-queue.constants.js';
import type {
  EmailJobData,
  EmailJobStatus,
  EmailQueueEvents,
  QueueSendOptions,
  QueuedEmail,
} from './email-queue.interface.js';
import type { ResolvedEmailQueueOptions } from './email-queue.options.js';
import { rebuildJobError } from './job-error.codec.js';
import { idempotencyKeyFrom, randomJobId } from './job-idempotency.rules.js';

const STATES: Record<string, EmailJobStatus['state']> = {
  completed: 'sent',
  failed: 'failed',
  active: 'active',
  delayed: 'delayed',
};

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new EmailError(`${what} timed out after ${ms} ms: is Redis reachable?`)),
      ms,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Queues emails on BullMQ (Redis) and, when `worker` is on, sends them from this process exactly once.
 * Its events (`sent`, `failed`, `rateLimited`) report what this process's worker does.
 *
 * @example
 * constructor(private readonly emails: EmailQueue) {}
 * const { jobId } = await this.emails.send({ to: ['ada@example.com'], subject: 'Hi', text: 'Hello' }, { jobId: `welcome:${user.id}` });
 * @publicApi
 */
@Injectable()
export class EmailQueue implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly events = new EventEmitter();
  private bull!: BullMq;
  private queue!: Queue<EmailJobData>;
  private worker?: Worker<EmailJobData>;
  private readonly connections: Redis[] = [];
  private email!: EmailService;
  private emailOptions?: ResolvedEmailOptions;

  constructor(
    @Inject(EMAIL_QUEUE_OPTIONS) private readonly options: ResolvedEmailQueueOptions,
    private readonly moduleRef: ModuleRef,
  ) {}

  /** Hooks into this process's worker events. */
  on<E extends keyof EmailQueueEvents>(event: E, listener: EmailQueueEvents[E]): this {
    this.events.on(event, listener);
    return this;
  }

  /** Removes a listener added with `on`. */
  off<E extends keyof EmailQueueEvents>(event: E, listener: EmailQueueEvents[E]): this {
    this.events.off(event, listener);
    return this;
  }

  /** Nest lifecycle hook (starts the worker): called by Nest, not by you. */
  onModuleInit(): void {
    this.bull = loadBullMq();
    this.email = this.moduleRef.get(EmailService, { strict: false });
    try {
      this.emailOptions = this.moduleRef.get<ResolvedEmailOptions>(EMAIL_RESOLVED_OPTIONS, { strict: false });
    } catch {
      this.emailOptions = undefined;
    }
    const o = this.options;
    const base = { prefix: o.prefix } as const;
    this.queue = new this.bull.Queue<EmailJobData>(o.queueName, {
      ...base,
      connection: this.connect(),
    });
    this.queue.on('error', () => undefined);
    if (o.worker) this.startWorker();
  }

  /** The BullMQ queue underneath (for dashboards and metrics). */
  get bullQueue(): Queue<EmailJobData> {
    return this.queue;
  }

  /**
   * Queues one email. The input is checked with `EmailService.send`'s rules first; nothing is queued
   * when it is wrong. The same `jobId` queued twice is one job and one email.
   * @throws EmailValidationError for a bad input or option; EmailError when Redis does not take the job.
   */
  async send(input: EmailInput, options: QueueSendOptions = {}): Promise<QueuedEmail> {
    const [queued] = await this.sendMany([{ input, options }]);
    return queued as QueuedEmail;
  }

  /** Queues many single emails at once (one Redis round trip, `addBulk`); all are checked first. */
  async sendMany(
    items: ReadonlyArray<{ input: EmailInput; options?: QueueSendOptions }>,
  ): Promise<QueuedEmail[]> {
    const issues: EmailValidationIssue[] = [];
    const trace = captureEmailTraceContext(); // the queuing request's trace, continued by the worker
    const jobs = items.map(({ input, options = {} }, i) => {
      const at = items.length > 1 ? `[${i}].` : '';
      // One plain snapshot, validated and then queued: what is checked is what the worker sends.
      const snap = snapshotInput(input);
      const prepared = this.withDefaultFrom(snap.value as EmailInput);
      const found = snap.issues.length > 0 ? snap.issues : validateEmailInput(prepared);
      for (const issue of found) issues.push({ ...issue, path: `${at}${issue.path}` });
      const jobId = options.jobId ?? randomJobId();
      if (typeof jobId !== 'string' || jobId === '' || /^\d+$/.test(jobId) || jobId.includes(':')) {
        issues.push({
          path: `${at}jobId`,
          message: 'must be a non-empty string, not only digits, without ":"',
        });
      }
      if (options.delayMs !== undefined && !(Number.isFinite(options.delayMs) && options.delayMs >= 0)) {
        issues.push({ path: `${at}delayMs`, message: 'must be a number of milliseconds >= 0' });
      }
      if (options.priority !== undefined && !(Number.isInteger(options.priority) && options.priority >= 0)) {
        issues.push({ path: `${at}priority`, message: 'must be an integer >= 0' });
      }
      const idempotencyKey = this.keyFor(jobId);
      return {
        name: SEND_JOB_NAME,
        data: { input: prepared, idempotencyKey, ...(trace ? { trace } : {}) },
        opts: {
          jobId,
          attempts: this.options.attempts,
          backoff: { type: BACKOFF_NAME },
          removeOnComplete: { age: Math.ceil(this.options.keepSentForMs / 1000) },
          removeOnFail: { age: Math.ceil(this.options.keepFailedForMs / 1000) },
          ...(options.delayMs ? { delay: options.delayMs } : {}),
          ...(options.priority ? { priority: options.priority } : {}),
        },
      };
    });
    if (issues.length > 0) throw new EmailValidationError(issues);
    await withTimeout(this.queue.addBulk(jobs), this.options.enqueueTimeoutMs, 'Queueing the email');
    return jobs.map((j) => ({ jobId: j.opts.jobId, idempotencyKey: j.data.idempotencyKey }));
  }

  /** The idempotency key of a job id in this queue: the same in every process. */
  keyFor(jobId: string): string {
    return idempotencyKeyFrom(this.options.queueName, jobId);
  }

  /** Where a queued send is, or null for an unknown job. */
  async status(jobId: string): Promise<EmailJobStatus | null> {
    const bullState = await this.queue.getJobState(jobId);
    const job = bullState === 'unknown' ? undefined : await this.queue.getJob(jobId);
    if (!job) return null;
    const state = STATES[bullState] ?? 'waiting';
    const result: EmailJobStatus = {
      jobId,
      idempotencyKey: job.data.idempotencyKey,
      state,
      attempts: job.attemptsMade,
    };
    if (state === 'sent' && job.returnvalue) result.messageId = (job.returnvalue as EmailLog).id;
    const stored = job.data.lastError;
    if (state === 'failed' && stored) {
      result.error = {
        name: stored.name,
        message: stored.message,
        ...(stored.outcome ? { outcome: stored.outcome } : {}),
      };
    }
    return result;
  }

  /**
   * Waits until the job is done.
   * @returns the message record once sent.
   * @throws the job's final error, rebuilt as the matching `EmailError` subclass; EmailError on timeout or unknown job.
   */
  async waitFor(jobId: string, options: { timeoutMs?: number } = {}): Promise<EmailLog> {
    const deadline = Date.now() + (options.timeoutMs ?? 60_000);
    let pause = 20;
    for (;;) {
      // The state first, then the job: a job read before it finished would lack its result.
      const state = await this.queue.getJobState(jobId);
      if (state === 'unknown')
        throw new EmailError(`No email job ${jobId} in queue ${this.options.queueName}`);
      const job = state === 'completed' || state === 'failed' ? await this.queue.getJob(jobId) : undefined;
      if (job && state === 'completed') return job.returnvalue as EmailLog;
      if (job && state === 'failed') {
        const stored = job.data.lastError;
        throw stored
          ? rebuildJobError(stored)
          : new EmailError(job.failedReason ?? `Email job ${jobId} failed`);
      }
      if (Date.now() >= deadline)
        throw new EmailError(`Email job ${jobId} still ${state} after ${options.timeoutMs ?? 60_000} ms`);
      await new Promise((r) => setTimeout(r, Math.min(pause, Math.max(1, deadline - Date.now()))));
      pause = Math.min(pause * 2, 250);
    }
  }

  /** Redis answers a PING (used by the health indicator). */
  async ping(): Promise<void> {
    const client = this.connections[0];
    if (!client) throw new EmailError('EmailQueue is not started');
    await client.ping();
  }

  /** Nest lifecycle hook: lets jobs in flight finish (bounded by closeTimeoutMs), before EmailModule closes its pool. */
  async beforeApplicationShutdown(): Promise<void> {
    if (this.worker) {
      const worker = this.worker;
      let timer: NodeJS.Timeout | undefined;
      const forced = new Promise<void>((resolve) => {
        timer = setTimeout(() => void worker.close(true).then(resolve, resolve), this.options.closeTimeoutMs);
      });
      await Promise.race([worker.close(), forced]).finally(() => clearTimeout(timer));
      this.worker = undefined;
    }
  }

  /** Nest lifecycle hook: closes the queue and the Redis connections. */
  async onApplicationShutdown(): Promise<void> {
    await this.beforeApplicationShutdown();
    await this.queue?.close().catch(() => undefined);
    await Promise.all(
      this.connections.map((c) =>
        c.status === 'ready' ? c.quit().catch(() => c.disconnect()) : c.disconnect(),
      ),
    );
  }

  private startWorker(): void {
    const o = this.options;
    const { backoff } = o;
    const worker = new this.bull.Worker<EmailJobData>(
      o.queueName,
      async (job: Job<EmailJobData>) =>
        processEmailJob(job, {
          bull: this.bull,
          email: this.email,
          rateLimit: (ms) => this.queue.rateLimit(ms),
          onRateLimited: (jobId, retryAfterMs) => this.events.emit('rateLimited', { jobId, retryAfterMs }),
        }),
      {
        prefix: o.prefix,
        concurrency: o.concurrency,
        // BullMQ applies a manual rate limit (queue.rateLimit) only to workers that have a limiter.
        limiter: { max: Number.MAX_SAFE_INTEGER, duration: 1000 },
        settings: {
          backoffStrategy: (attemptsMade: number) => {
            const exp = Math.min(backoff.maxDelayMs, backoff.delayMs * 2 ** Math.max(0, attemptsMade - 1));
            return Math.round(exp / 2 + (Math.random() * exp) / 2);
          },
        },
        ...o.workerOptions,
        connection: this.connect(),
      },
    );
    worker.on('error', () => undefined);
    worker.on('completed', (job, record) =>
      this.events.emit('sent', { jobId: String(job.id), idempotencyKey: job.data.idempotencyKey, record }),
    );
    worker.on('failed', (job, error) => {
      if (!job) return;
      const final =
        job.finishedOn !== undefined && job.finishedOn > 0 && job.attemptsMade >= (job.opts.attempts ?? 1);
      this.events.emit('failed', {
        jobId: String(job.id),
        idempotencyKey: job.data.idempotencyKey,
        error: job.data.lastError ? rebuildJobError(job.data.lastError) : error,
        final: final || error.name === 'UnrecoverableError',
      });
    });
    this.worker = worker;
  }

  private connect(): Redis {
    const RedisCtor = loadIoRedis();
    const c = this.options.connection;
    const conn =
      typeof c === 'string'
        ? new RedisCtor(c, { maxRetriesPerRequest: null })
        : new RedisCtor({ ...(c as object), maxRetriesPerRequest: null });
    conn.on('error', () => undefined);
    this.connections.push(conn);
    return conn;
  }

  private withDefaultFrom(input: EmailInput): EmailInput {
    const from = this.emailOptions?.defaultFrom;
    if (from === undefined || typeof input !== 'object' || input === null || input.from !== undefined)
      return input;
    return { ...input, from };
  }
}

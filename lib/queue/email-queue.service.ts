import { EventEmitter } from 'node:events';
import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { Job, Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { validateEmailInput } from '../validation/send.rules.js';
import { snapshotInput } from '../validation/input-snapshot.helpers.js';
import { captureEmailTraceContext } from '../telemetry/trace-context.helpers.js';
import { EmailError } from '../errors/email.error.js';
import { EmailJobConflictError, EmailQueueUnavailableError } from '../errors/email-queue.error.js';
import { EmailSendUncertainError } from '../errors/email-send-uncertain.error.js';
import { getEmailServiceToken } from '../email.module-definition.js';
import { parseEmailLog } from '../records/email-record.parser.js';
import { EmailValidationError, type EmailValidationIssue } from '../errors/email-validation.error.js';
import type { EmailInput } from '../interfaces/email-input.interface.js';
import type { ResolvedEmailOptions } from '../interfaces/email-module-options.interface.js';
import type { EmailLog } from '../interfaces/email-records.interface.js';
import type { EmailService } from '../service/email.service.js';
import { withDefaultFrom } from '../validation/call-options.rules.js';
import { type BullMq, loadBullMq, loadIoRedis } from '../peers/optional-peer.loader.js';
import { processEmailJob } from './bullmq-job.engine.js';
import { BACKOFF_NAME } from './email-queue.constants.js';
import type {
  EmailJobData,
  EmailJobStatus,
  EmailQueueEvents,
  QueueSendOptions,
  QueuedEmail,
} from './email-queue.interface.js';
import { EmailQueueResolvedOptions, type ResolvedEmailQueueOptions } from './email-queue.options.js';
import { rebuildJobError } from '../jobs/job-error.parser.js';
import { jobBackoffDelay, withTimeout } from '../policy/delivery.policy.js';
import { fingerprintOf, jobEnding, settledBy, waitForJob } from '../jobs/email-job.helpers.js';
import { idempotencyKeyFrom, randomJobId } from '../jobs/job-idempotency.rules.js';
import { checkRedisDurability, type RedisDurability } from './redis-durability.policy.js';

/** BullMQ's reason for a job whose workers died more often than allowed (BullMQ's own stalled check). */
const STALLED_REASON = 'job stalled more than allowable limit';
/**
 * The ioredis refusal of a command while disconnected with the offline queue off: proof that it was never
 * written. Anything else (a timeout, "Connection is closed" for commands in flight) may have reached Redis.
 */
const NOT_WRITTEN = /enableOfflineQueue options is false/;

const STATES: Record<string, EmailJobStatus['state']> = {
  completed: 'sent',
  failed: 'failed',
  active: 'active',
  delayed: 'delayed',
};

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
export class EmailQueue
  implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown
{
  private readonly events = new EventEmitter();
  private readonly logger = new Logger('EmailQueue');
  private bull!: BullMq;
  private queue!: Queue<EmailJobData>;
  private worker?: Worker<EmailJobData>;
  /** Queues, reads and checks: fails fast while Redis is away, never replays a command. */
  private producer!: Redis;
  private readonly connections: Redis[] = [];
  private queueReady = false;
  private email!: EmailService;
  private defaultFrom?: string;
  private closeDeadline?: number;

  constructor(
    @Inject(EmailQueueResolvedOptions) private readonly options: ResolvedEmailQueueOptions,
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
    this.email = this.findEmailService();
    // The service's own defaultFrom, so that what the queue checks is what the service will send.
    this.defaultFrom = (this.email as unknown as { options?: ResolvedEmailOptions }).options?.defaultFrom;
    const o = this.options;
    this.producer = this.connect('producer');
    this.queue = new this.bull.Queue<EmailJobData>(o.queueName, {
      ...(o.prefix !== undefined ? { prefix: o.prefix } : {}),
      connection: this.producer,
    });
    this.queue.on('error', () => undefined);
    this.queue.waitUntilReady().then(
      () => (this.queueReady = true),
      () => undefined,
    );
    if (o.worker) this.startWorker();
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
  get bullQueue(): Queue<EmailJobData> {
    return this.queue;
  }

  /**
   * Queues one email. The input is checked with `EmailService.send`'s rules first; nothing is queued
   * when it is wrong. The same `jobId` queued twice with the same input is one job and one email.
   * @throws EmailValidationError for a bad input or option; EmailJobConflictError when the job id already
   * holds another input; EmailQueueUnavailableError when Redis does not take the job within `enqueueTimeoutMs`.
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
      const prepared = withDefaultFrom(snap.value, this.defaultFrom) as EmailInput;
      const found = snap.issues.length > 0 ? snap.issues : validateEmailInput(prepared);
      for (const issue of found) issues.push({ ...issue, path: `${at}${issue.path}` });
      // The job id is fixed before anything reaches Redis: a retry with it can never be a second email.
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
      const data: EmailJobData = { input: prepared, idempotencyKey, fingerprint: fingerprintOf(prepared) };
      if (trace) data.trace = trace;
      return {
        name: found.length === 0 ? this.jobNameOf(prepared) : 'email',
        data,
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
    await this.add(jobs);
    return jobs.map((j) => ({ jobId: j.opts.jobId, idempotencyKey: j.data.idempotencyKey }));
  }

  /** The idempotency key of a job id in this queue: the same in every process. */
  keyFor(jobId: string): string {
    return idempotencyKeyFrom(this.options.queueName, jobId);
  }

  /** Where a queued send is, or null for an unknown job. The record has its dates as `Date`. */
  async status(jobId: string): Promise<EmailJobStatus | null> {
    await this.reachable();
    const bullState = await this.queue.getJobState(jobId);
    const job = bullState === 'unknown' ? undefined : await this.queue.getJob(jobId);
    if (!job) return null;
    const state = STATES[bullState] ?? 'waiting';
    return {
      jobId,
      idempotencyKey: job.data.idempotencyKey,
      state,
      attempts: job.attemptsMade,
      ...jobEnding(jobId, state, job.returnvalue, () => this.finalErrorOf(job)),
    };
  }

  /**
   * Waits until the job is done.
   * @returns the message record once sent (the same typed record `EmailService` returns).
   * @throws the job's final error, rebuilt as the matching `EmailError` subclass; EmailError on timeout or unknown job.
   */
  async waitFor(jobId: string, options: { timeoutMs?: number } = {}): Promise<EmailLog> {
    await this.reachable();
    return waitForJob(jobId, options.timeoutMs ?? 60_000, async () => {
      // The state first, then the job: a job read before it finished would lack its result.
      const state = await this.queue.getJobState(jobId);
      if (state === 'unknown')
        throw new EmailError(`No email job ${jobId} in queue ${this.options.queueName}`);
      const job = state === 'completed' || state === 'failed' ? await this.queue.getJob(jobId) : undefined;
      if (job && state === 'completed') return parseEmailLog(job.returnvalue, `job ${jobId}`);
      if (job && state === 'failed') throw this.finalErrorOf(job);
      return state;
    });
  }

  /** Redis answers a PING (used by the health indicator). */
  async ping(): Promise<void> {
    if (!this.producer) throw new EmailError('EmailQueue is not started');
    await this.reachable();
    await this.producer.ping();
  }

  /** Whether this Redis keeps queued emails through a restart and under memory pressure (CONFIG GET). */
  durability(): Promise<RedisDurability> {
    return checkRedisDurability(this.producer);
  }

  /** Nest lifecycle hook: lets jobs in flight finish (until `closeTimeoutMs` nearly runs out), before EmailModule closes its pool. */
  async beforeApplicationShutdown(): Promise<void> {
    const deadline = (this.closeDeadline ??= Date.now() + this.options.closeTimeoutMs);
    const worker = this.worker;
    if (!worker) return;
    this.worker = undefined;
    // Leave a tenth of the time (at most 1 s) to stop the worker and close the queue should it not end.
    const spare = Math.min(1000, this.options.closeTimeoutMs / 10);
    if (!(await settledBy(worker.close(), deadline - spare))) {
      await settledBy(worker.close(true), deadline - spare / 2);
      void worker.disconnect().catch(() => undefined);
    }
  }

  /** Nest lifecycle hook: closes the queue and the Redis connections, within `closeTimeoutMs` whatever Redis does. */
  async onApplicationShutdown(): Promise<void> {
    await this.beforeApplicationShutdown();
    const deadline = this.closeDeadline ?? Date.now();
    if (this.queue) await settledBy(this.queue.close(), deadline);
    await Promise.all(
      this.connections.map(async (c) => {
        if (c.status === 'ready') await settledBy(c.quit(), deadline);
        c.disconnect();
      }),
    );
  }

  /** Adds the jobs, failing fast (never replaying the add later) when Redis cannot take them now. */
  private async add(
    jobs: Array<{ name: string; data: EmailJobData; opts: { jobId: string } }>,
  ): Promise<void> {
    const jobIds = jobs.map((j) => j.opts.jobId);
    const ms = this.options.enqueueTimeoutMs;
    // Only a connection that is up gets the add: one that is not never sends it later.
    if (!(await this.connectedWithin(ms))) {
      throw new EmailQueueUnavailableError({
        jobIds,
        mayLand: false,
        reason: `no connection to Redis within ${ms} ms (${this.producer.status})`,
      });
    }
    let stored: Array<[Error | null, unknown]>;
    try {
      await withTimeout(this.queue.addBulk(jobs), ms, 'queueing');
      // What each job id holds now: ours, or an earlier job's with the same id.
      const read = this.producer.pipeline();
      for (const id of jobIds) read.hget(this.queue.toKey(id), 'data');
      stored = ((await withTimeout(read.exec(), ms, 'reading the jobs back')) ?? []) as typeof stored;
    } catch (err) {
      const reason = (err as Error).message;
      throw new EmailQueueUnavailableError({
        jobIds,
        mayLand: !NOT_WRITTEN.test(reason),
        reason,
        cause: err,
      });
    }
    const conflicts = jobIds.filter((id, i) => {
      const [error, text] = stored[i] ?? [null, null];
      if (error || typeof text !== 'string') return false;
      const held = (JSON.parse(text) as Partial<EmailJobData>).fingerprint;
      return held !== undefined && held !== jobs[i]?.data.fingerprint;
    });
    if (conflicts.length > 0) {
      throw new EmailJobConflictError({ jobIds: conflicts, queued: jobIds.length - conflicts.length });
    }
  }

  /** Waits (at most `enqueueTimeoutMs`) for the connection, which refuses commands while it is down. */
  private async reachable(): Promise<void> {
    const ms = this.options.enqueueTimeoutMs;
    if (!(await this.connectedWithin(ms)))
      throw new EmailError(`No connection to Redis within ${ms} ms (${this.producer.status})`);
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

  /** The job's final error: what it stored, or `EmailSendUncertainError` for a job its workers died on. */
  private finalErrorOf(job: Job<EmailJobData>): Error {
    const stored = job.data.lastError;
    if (job.failedReason === STALLED_REASON && stored?.name !== 'EmailSendUncertainError') {
      return new EmailSendUncertainError({
        idempotencyKey: job.data.idempotencyKey,
        attempts: job.attemptsStarted ?? job.attemptsMade,
        cause: new EmailError(`the job's workers died during its attempts (${STALLED_REASON})`),
      });
    }
    if (stored) return rebuildJobError(stored);
    return new EmailError(job.failedReason || `Email job ${String(job.id)} failed`);
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
          maxStalledCount: o.maxStalledCount,
        }),
      {
        ...(o.prefix !== undefined ? { prefix: o.prefix } : {}),
        concurrency: o.concurrency,
        // BullMQ applies a manual rate limit (queue.rateLimit) only to workers that have a limiter.
        limiter: { max: Number.MAX_SAFE_INTEGER, duration: 1000 },
        settings: {
          // the table's full jitter on the queue's schedule (policy/delivery.policy.ts)
          backoffStrategy: (attemptsMade: number) => jobBackoffDelay(attemptsMade, backoff),
        },
        ...o.workerOptions,
        // The processor counts worker deaths itself, so that a job lost to them ends EmailSendUncertainError.
        maxStalledCount: Number.MAX_SAFE_INTEGER,
        connection: this.connect('worker'),
      },
    );
    worker.on('error', () => undefined);
    worker.on('completed', (job, record) =>
      this.events.emit('sent', {
        jobId: String(job.id),
        idempotencyKey: job.data.idempotencyKey,
        record: parseEmailLog(JSON.parse(JSON.stringify(record)) as unknown, `job ${String(job.id)}`),
      }),
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

  /** The `EmailService` of the `EmailModule` instance named in the options (the default one without a name). */
  private findEmailService(): EmailService {
    const name = this.options.emailService;
    try {
      return this.moduleRef.get<EmailService>(getEmailServiceToken(name), { strict: false });
    } catch {
      throw new EmailError(
        name === undefined
          ? 'EmailQueueModule needs EmailModule.forRoot(...) in the application'
          : `EmailQueueModule: no EmailModule instance named "${name}" (EmailModule.forRoot({ name: '${name}', ... }))`,
      );
    }
  }

  /**
   * A connection of the queue's own. The producer's refuses commands while Redis is away (no offline
   * queue) and never replays an unanswered one after a reconnect; the worker's waits for Redis.
   */
  private connect(role: 'producer' | 'worker'): Redis {
    const RedisCtor = loadIoRedis();
    const timeout = this.options.enqueueTimeoutMs;
    const own =
      role === 'producer'
        ? {
            enableOfflineQueue: false,
            autoResendUnfulfilledCommands: false,
            maxRetriesPerRequest: 1,
            ...(timeout > 0 ? { commandTimeout: timeout } : {}),
          }
        : { maxRetriesPerRequest: null };
    const c = this.options.connection;
    const conn =
      typeof c === 'string'
        ? new RedisCtor(c, own)
        : typeof (c as Redis).duplicate === 'function'
          ? (c as Redis).duplicate(own)
          : new RedisCtor({ ...(c as object), ...own });
    conn.on('error', () => undefined);
    this.connections.push(conn);
    return conn;
  }

  private jobNameOf(input: EmailInput): string {
    try {
      return String(this.options.jobName(input));
    } catch {
      return 'email';
    }
  }
}

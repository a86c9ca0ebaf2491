import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type PgBoss from 'pg-boss';
import type { Pool, PoolClient } from 'pg';
import { validateEmailInput } from '../validation/send.rules.js';
import { snapshotInput } from '../validation/input-snapshot.helpers.js';
import { captureEmailTraceContext } from '../telemetry/trace-context.helpers.js';
import { EmailError } from '../errors/email.error.js';
import { EmailJobConflictError } from '../errors/email-queue.error.js';
import { EmailOutboxUnavailableError } from '../errors/email-outbox.error.js';
import { EmailSendUncertainError } from '../errors/email-send-uncertain.error.js';
import { getEmailServiceToken } from '../email.module-definition.js';
import { EmailValidationError, type EmailValidationIssue } from '../errors/email-validation.error.js';
import type { EmailInput } from '../interfaces/email-input.interface.js';
import type { ResolvedEmailOptions } from '../interfaces/email-module-options.interface.js';
import type { EmailLog } from '../interfaces/email-records.interface.js';
import type { EmailService } from '../service/email.service.js';
import { fingerprintOf, jobEnding, settledBy, waitForJob } from '../jobs/email-job.helpers.js';
import { idempotencyKeyFrom, randomJobId } from '../jobs/job-idempotency.rules.js';
import { rebuildJobError, type StoredJobError } from '../jobs/job-error.parser.js';
import type {
  EmailOutboxEvents,
  EmailOutboxJobStatus,
  OutboxJobData,
  OutboxSendOptions,
  OutboxedEmail,
} from './email-outbox.interface.js';
import { EmailOutboxResolvedOptions, type ResolvedEmailOutboxOptions } from './email-outbox.options.js';
import { type OutboxDb, outboxDbOf, pgDb } from './outbox-tx.helpers.js';
import { runOutboxJob, type OutboxJobOutput } from './pgboss-job.engine.js';
import { loadPg, loadPgBoss } from '../peers/optional-peer.loader.js';

/** Where the connection goes, for errors: host, port and database, never the password. */
function describeTarget(connection: ResolvedEmailOutboxOptions['connection']): string {
  if (typeof connection !== 'string') return 'the given pg Pool';
  try {
    const url = new URL(connection);
    return `${url.hostname}:${url.port || '5432'}${url.pathname}`;
  } catch {
    return 'the configured database';
  }
}

/** A pg-boss job row as `getJobById` and the worker (with metadata) give it. */
interface BossJob {
  id: string;
  state: string;
  data: OutboxJobData;
  retryCount: number;
  startAfter?: Date | string;
  output?: OutboxJobOutput | null;
}

/**
 * Enqueues emails in the app's own PostgreSQL transaction (pg-boss) and, when `worker` is on, sends them
 * from this process exactly once after the commit: a rolled-back transaction sends nothing. Its events
 * (`sent`, `failed`, `rateLimited`) report what this process's worker does.
 *
 * @example
 * await dataSource.transaction(async (manager) => {
 *   const order = await manager.save(Order, { total: 42 });
 *   await this.outbox.send({ to: ['ada@example.com'], subject: `Order ${order.id}`, text: 'Thanks!' }, { tx: manager, jobId: `order:${order.id}` });
 * });
 * @publicApi
 */
@Injectable()
export class EmailOutbox implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly events = new EventEmitter();
  private readonly logger = new Logger('EmailOutbox');
  private boss!: PgBoss;
  private pool!: Pool;
  private ownPool = false;
  private email!: EmailService;
  private defaultFrom?: string;
  private closeDeadline?: number;
  private workers = false;
  private loops: Array<Promise<void>> = [];
  /** pg-boss ids of the jobs this process's loops are sending now. */
  private readonly inFlight = new Set<string>();
  /** Until when this process's workers hold back after a 429 (pg-boss has no queue-wide pause). */
  private pausedUntil = 0;

  constructor(
    @Inject(EmailOutboxResolvedOptions) private readonly options: ResolvedEmailOutboxOptions,
    private readonly moduleRef: ModuleRef,
  ) {}

  /** Hooks into this process's worker events. */
  on<E extends keyof EmailOutboxEvents>(event: E, listener: EmailOutboxEvents[E]): this {
    this.events.on(event, listener);
    return this;
  }

  /** Removes a listener added with `on`. */
  off<E extends keyof EmailOutboxEvents>(event: E, listener: EmailOutboxEvents[E]): this {
    this.events.off(event, listener);
    return this;
  }

  /** Nest lifecycle hook (connects, creates pg-boss's schema, starts the worker): called by Nest, not by you. */
  async onModuleInit(): Promise<void> {
    const PgBossCtor = loadPgBoss();
    const pg = loadPg();
    this.email = this.findEmailService();
    this.defaultFrom = (this.email as unknown as { options?: ResolvedEmailOptions }).options?.defaultFrom;
    const o = this.options;
    if (typeof o.connection === 'string') {
      this.pool = new pg.Pool({
        connectionString: o.connection,
        max: o.poolSize,
        connectionTimeoutMillis: 5000,
      });
      this.pool.on('error', () => undefined); // an idle client's connection lost: the next query says so
      this.ownPool = true;
    } else {
      this.pool = o.connection;
    }
    try {
      await this.pool.query('SELECT 1');
    } catch (err) {
      await this.endOwnPool();
      throw new EmailOutboxUnavailableError(
        `${describeTarget(o.connection)} did not answer at boot (${(err as { code?: string }).code ?? (err as Error).message})`,
        err,
      );
    }
    const keepSeconds = Math.ceil(Math.max(o.keepSentForMs, o.keepFailedForMs) / 1000);
    this.boss = new PgBossCtor({
      db: { executeSql: (text: string, values?: unknown[]) => this.pool.query(text, values) },
      schema: o.schema,
      maintenanceIntervalSeconds: Math.ceil(o.maintenanceIntervalMs / 1000),
      deleteAfterSeconds: keepSeconds,
      ...o.bossOptions,
    } as unknown as PgBoss.ConstructorOptions);
    this.boss.on('error', (err: Error) => this.logger.debug(`pg-boss: ${err.message}`));
    try {
      await this.boss.start();
      await this.ensureQueue();
    } catch (err) {
      await settledBy(this.boss.stop({ graceful: false, close: false, wait: true }), Date.now() + 2000);
      await this.endOwnPool();
      throw new EmailOutboxUnavailableError(
        `pg-boss could not start on ${describeTarget(o.connection)} (${(err as Error).message})`,
        err,
      );
    }
    if (o.worker) this.startWorkers();
  }

  /** The pg-boss instance underneath (for dashboards and metrics). */
  get pgBoss(): PgBoss {
    return this.boss;
  }

  /**
   * Enqueues one email in `options.tx`, the app's open transaction (or in the outbox's own without it): it
   * is sent only if that transaction commits. The input is checked first with `EmailService.send`'s rules;
   * nothing is written when it is wrong and the transaction stays usable. The same `jobId` enqueued twice,
   * in one transaction or two, is one job and one email.
   * @throws EmailValidationError for a bad input or option (nothing written); EmailOutboxTxError for a `tx`
   * of an unknown kind or outside a transaction (nothing written); EmailJobConflictError when the job id
   * already holds another input; the driver's error when the write fails (the transaction is then aborted).
   */
  async send(input: EmailInput, options: OutboxSendOptions = {}): Promise<OutboxedEmail> {
    const { tx, ...rest } = options;
    const [sent] = await this.sendMany([{ input, options: rest }], tx === undefined ? {} : { tx });
    return sent as OutboxedEmail;
  }

  /** Enqueues many single emails in one transaction (`tx`, or the outbox's own); all are checked first. */
  async sendMany(
    items: ReadonlyArray<{ input: EmailInput; options?: Omit<OutboxSendOptions, 'tx'> }>,
    options: Pick<OutboxSendOptions, 'tx'> = {},
  ): Promise<OutboxedEmail[]> {
    const issues: EmailValidationIssue[] = [];
    const trace = captureEmailTraceContext();
    const jobs = items.map(({ input, options: itemOptions = {} }, i) => {
      const at = items.length > 1 ? `[${i}].` : '';
      const snap = snapshotInput(input);
      const prepared = this.withDefaultFrom(snap.value as EmailInput);
      const found = snap.issues.length > 0 ? snap.issues : validateEmailInput(prepared);
      for (const issue of found) issues.push({ ...issue, path: `${at}${issue.path}` });
      const jobId = itemOptions.jobId ?? randomJobId();
      if (typeof jobId !== 'string' || jobId === '' || jobId.length > 1000)
        issues.push({ path: `${at}jobId`, message: 'must be a non-empty string of at most 1000 characters' });
      const { delayMs } = itemOptions;
      if (delayMs !== undefined && !(Number.isFinite(delayMs) && delayMs >= 0))
        issues.push({ path: `${at}delayMs`, message: 'must be a number of milliseconds >= 0' });
      const idempotencyKey = typeof jobId === 'string' ? this.keyFor(jobId) : '';
      const data: OutboxJobData = {
        jobId,
        input: prepared,
        idempotencyKey,
        fingerprint: fingerprintOf(prepared),
        ...(trace ? { trace } : {}),
      };
      return { data, delayMs };
    });
    // Nothing touches the transaction before every check passed: a bad input leaves it usable.
    if (issues.length > 0) throw new EmailValidationError(issues);
    const write = async (db: OutboxDb) => {
      for (const job of jobs) await this.insert(db, job.data, job.delayMs);
    };
    if (options.tx !== undefined) {
      await write(outboxDbOf(options.tx).db);
    } else {
      await this.inOwnTransaction(write);
    }
    return jobs.map((j) => ({ jobId: j.data.jobId, idempotencyKey: j.data.idempotencyKey }));
  }

  /** The idempotency key of a job id in this outbox: the same in every process. */
  keyFor(jobId: string): string {
    return idempotencyKeyFrom('outbox', this.options.queueName, jobId);
  }

  /** Where an enqueued send is, or null for an unknown job (or one in a transaction not committed yet). */
  async status(jobId: string): Promise<EmailOutboxJobStatus | null> {
    const job = await this.readJob(jobId);
    if (!job) return null;
    const output = job.output ?? undefined;
    const finished = job.state === 'completed' || job.state === 'failed' || job.state === 'cancelled';
    const failed = job.state === 'failed' || job.state === 'cancelled' || output?.emailOutcome === 'failed';
    const state: EmailOutboxJobStatus['state'] = failed
      ? 'failed'
      : job.state === 'completed'
        ? 'sent'
        : job.state === 'active'
          ? 'active'
          : job.state === 'retry' ||
              (job.startAfter !== undefined && new Date(job.startAfter).getTime() > Date.now())
            ? 'delayed'
            : 'waiting';
    return {
      jobId,
      idempotencyKey: job.data.idempotencyKey,
      state,
      attempts: finished || job.state === 'retry' ? job.retryCount + 1 : job.retryCount,
      ...jobEnding(jobId, state, output?.record, () => this.finalErrorOf(job)),
    };
  }

  /**
   * Waits until the job is done.
   * @returns the message record once sent.
   * @throws the job's final error, rebuilt as the matching `EmailError` subclass; EmailError on timeout or unknown job.
   */
  async waitFor(jobId: string, options: { timeoutMs?: number } = {}): Promise<EmailLog> {
    return waitForJob(jobId, options.timeoutMs ?? 60_000, async () => {
      const status = await this.status(jobId);
      if (!status) throw new EmailError(`No email job ${jobId} in outbox ${this.options.queueName}`);
      if (status.state === 'sent' && status.record) return status.record;
      if (status.state === 'failed') throw this.finalErrorOf((await this.readJob(jobId)) as BossJob);
      return status.state;
    });
  }

  /** PostgreSQL answers (used by the health indicator). */
  async ping(): Promise<void> {
    if (!this.pool) throw new EmailError('EmailOutbox is not started');
    try {
      await this.pool.query('SELECT 1');
    } catch (err) {
      throw new EmailOutboxUnavailableError(
        `${describeTarget(this.options.connection)} (${(err as { code?: string }).code ?? (err as Error).message})`,
        err,
      );
    }
  }

  /** Jobs not yet sent (waiting, delayed or retrying), for the health indicator. */
  async backlog(): Promise<number> {
    const size = (this.boss as unknown as { getQueueSize?: (n: string) => Promise<number> }).getQueueSize;
    return typeof size === 'function' ? Number(await size.call(this.boss, this.options.queueName)) : 0;
  }

  /** Nest lifecycle hook: lets jobs in flight finish (until `closeTimeoutMs` nearly runs out), before EmailModule closes its pool. */
  async beforeApplicationShutdown(): Promise<void> {
    const deadline = (this.closeDeadline ??= Date.now() + this.options.closeTimeoutMs);
    if (!this.boss || !this.workers) return;
    this.workers = false;
    // Jobs in flight get until shortly before the deadline; those that do not end are given back to pg-boss
    // (failed now, so another process retries them at once, with the same key).
    const spare = Math.min(1000, this.options.closeTimeoutMs / 10);
    await settledBy(Promise.all(this.loops), deadline - spare);
    const left = [...this.inFlight];
    if (left.length > 0)
      await settledBy(
        Promise.all(
          left.map((id) =>
            this.boss.fail(this.options.queueName, id, { message: 'the app closed during the attempt' }),
          ),
        ),
        deadline - spare / 2,
      );
  }

  /** Nest lifecycle hook: stops pg-boss and ends the outbox's own pool, within `closeTimeoutMs` whatever PostgreSQL does. */
  async onApplicationShutdown(): Promise<void> {
    await this.beforeApplicationShutdown();
    const deadline = this.closeDeadline ?? Date.now();
    if (this.boss) await settledBy(this.boss.stop({ graceful: false, close: false, wait: true }), deadline);
    await settledBy(this.endOwnPool(), deadline);
  }

  /** Writes one job through `db` (pg-boss's `send` with the caller's handle as its `db` option). */
  private async insert(db: OutboxDb, data: OutboxJobData, delayMs: number | undefined): Promise<void> {
    const o = this.options;
    const id = this.uuidOf(data.jobId);
    const created = await this.boss.send(
      o.queueName,
      data as unknown as object,
      {
        id,
        db,
        retryLimit: o.attempts - 1,
        retryDelay: Math.max(1, Math.round(o.backoff.delayMs / 1000)),
        retryBackoff: true,
        retryDelayMax: Math.max(1, Math.round(o.backoff.maxDelayMs / 1000)),
        expireInSeconds: Math.ceil(o.attemptTimeoutMs / 1000),
        ...(delayMs ? { startAfter: new Date(Date.now() + delayMs) } : {}),
      } as PgBoss.SendOptions & { db: OutboxDb },
    );
    if (created !== null) return;
    // The id exists already (enqueued before, maybe by another transaction that committed first): one email.
    const held = (await this.boss.getJobById(o.queueName, id, {
      db,
      includeArchive: true,
    } as never)) as BossJob | null;
    if (!held)
      // pg-boss writes nothing for a queue it does not know: never let an email vanish silently.
      throw new EmailError(
        `pg-boss wrote no job for ${data.jobId} in queue ${o.queueName} (schema ${o.schema}): does the queue exist?`,
      );
    if (held.data?.fingerprint !== undefined && held.data.fingerprint !== data.fingerprint)
      throw new EmailJobConflictError({ jobIds: [data.jobId], queued: 0 });
  }

  private async inOwnTransaction(write: (db: OutboxDb) => Promise<void>): Promise<void> {
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw new EmailOutboxUnavailableError(
        `${describeTarget(this.options.connection)} (${(err as { code?: string }).code ?? (err as Error).message})`,
        err,
      );
    }
    try {
      await client.query('BEGIN');
      await write(pgDb(client as unknown as Record<string, unknown>, false));
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  /** pg-boss's job id for the app's job id: a UUID from its SHA-256, the same in every process. */
  private uuidOf(jobId: string): string {
    const h = createHash('sha256')
      .update(JSON.stringify([this.options.queueName, jobId]))
      .digest('hex');
    const variant = ((parseInt(h[16] as string, 16) & 0x3) | 0x8).toString(16);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
  }

  private async readJob(jobId: string): Promise<BossJob | null> {
    try {
      return (await this.boss.getJobById(this.options.queueName, this.uuidOf(jobId), {
        includeArchive: true,
      } as never)) as BossJob | null;
    } catch (err) {
      throw new EmailOutboxUnavailableError(`reading job ${jobId} failed (${(err as Error).message})`, err);
    }
  }

  /** The job's final error: what it stored, or `EmailSendUncertainError` for a job its workers died on. */
  private finalErrorOf(job: BossJob): Error {
    const output = job.output ?? undefined;
    const stored: StoredJobError | undefined = output?.error ?? output?.lastError;
    if (stored) return rebuildJobError(stored);
    if (job.data.uncertain || output?.uncertain || !output?.emailAttempt) {
      return new EmailSendUncertainError({
        idempotencyKey: job.data.idempotencyKey,
        attempts: job.retryCount + 1,
        cause: new EmailError(
          `the job's workers died or timed out during its attempts (${output?.message ?? job.state})`,
        ),
      });
    }
    return new EmailError(`Email job ${job.data.jobId} failed`);
  }

  /** pg-boss 10 needs its queue created before a send; creating it twice (two processes booting) is harmless. */
  private async ensureQueue(): Promise<void> {
    const name = this.options.queueName;
    if (await this.boss.getQueue(name)) return;
    try {
      await this.boss.createQueue(name, { name, policy: 'standard' } as never);
    } catch (err) {
      if (!(await this.boss.getQueue(name))) throw err;
    }
  }

  /**
   * `concurrency` loops of pg-boss's own fetch / complete / fail (each job taken by one process with SKIP
   * LOCKED). Not pg-boss's `work()`: in pg-boss 10 it waits a polling interval after every fetch, even one
   * that found a job, and completes jobs without awaiting (no back-pressure on the pool, and an unhandled
   * rejection when PostgreSQL fails at that moment). Here a loop that found a job fetches again at once, an
   * idle one waits `pollingIntervalMs`, and every completion is awaited and its failure caught (the job then
   * expires and is retried with the same key: still one email).
   */
  private startWorkers(): void {
    const o = this.options;
    this.workers = true;
    const deps = {
      queueName: o.queueName,
      attempts: o.attempts,
      email: this.email,
      closing: () => !this.workers,
      pause: {
        until: () => this.pausedUntil,
        set: (ms: number) => (this.pausedUntil = Math.max(this.pausedUntil, Date.now() + ms)),
      },
      emit: <E extends keyof EmailOutboxEvents>(event: E, payload: Parameters<EmailOutboxEvents[E]>[0]) =>
        void this.events.emit(event, payload),
    };
    const loop = async (i: number): Promise<void> => {
      // Idle loops poll in turn, not all at once: a new job waits about pollingIntervalMs / concurrency / 2.
      await this.idle((i * o.pollingIntervalMs) / o.concurrency);
      while (this.workers) {
        let job: BossJob | undefined;
        try {
          const jobs = (await this.boss.fetch(o.queueName, {
            batchSize: 1,
            includeMetadata: true,
          } as never)) as BossJob[] | BossJob | null;
          job = (Array.isArray(jobs) ? jobs[0] : jobs) ?? undefined;
        } catch (err) {
          this.logger.debug(`fetch failed: ${(err as Error).message}`);
        }
        if (!job) {
          await this.idle(o.pollingIntervalMs);
          continue;
        }
        this.inFlight.add(job.id);
        try {
          const output = await runOutboxJob(job, deps);
          await this.boss.complete(o.queueName, job.id, output as object);
        } catch (err) {
          await this.boss.fail(o.queueName, job.id, err as object).catch(() => undefined);
        } finally {
          this.inFlight.delete(job.id);
        }
      }
    };
    this.loops = Array.from({ length: o.concurrency }, (_, i) =>
      loop(i).catch((err: unknown) => this.logger.error(`outbox worker stopped: ${(err as Error).message}`)),
    );
  }

  /** Waits `ms`, or less when the app starts closing. */
  private async idle(ms: number): Promise<void> {
    const until = Date.now() + ms;
    while (this.workers && Date.now() < until)
      await new Promise((r) => setTimeout(r, Math.min(50, until - Date.now())));
  }

  /** The `EmailService` of the `EmailModule` instance named in the options (the default one without a name). */
  private findEmailService(): EmailService {
    const name = this.options.emailService;
    try {
      return this.moduleRef.get<EmailService>(getEmailServiceToken(name), { strict: false });
    } catch {
      throw new EmailError(
        name === undefined
          ? 'EmailOutboxModule needs EmailModule.forRoot(...) in the application'
          : `EmailOutboxModule: no EmailModule instance named "${name}" (EmailModule.forRoot({ name: '${name}', ... }))`,
      );
    }
  }

  private async endOwnPool(): Promise<void> {
    if (!this.ownPool || !this.pool) return;
    this.ownPool = false;
    await this.pool.end().catch(() => undefined);
  }

  private withDefaultFrom(input: EmailInput): EmailInput {
    const from = this.defaultFrom;
    if (from === undefined || typeof input !== 'object' || input === null || input.from !== undefined)
      return input;
    return { ...input, from };
  }
}

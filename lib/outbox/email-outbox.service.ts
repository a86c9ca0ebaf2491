import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type PgBoss from 'pg-boss';
import type { Pool } from 'pg';
import { EmailError } from '../errors/email.error.js';
import { EmailOutboxUnavailableError } from '../errors/email-outbox.error.js';
import type { EmailInput } from '../interfaces/email-input.interface.js';
import type {
  EmailJobCancelResult,
  EmailJobRescheduleResult,
  EmailJobSchedule,
} from '../interfaces/email-job.interface.js';
import { EmailJobs } from '../jobs/email-jobs.service.js';
import type { HeldJob, JobVerdict } from '../jobs/email-job.interface.js';
import { findEmailService } from '../jobs/email-job.helpers.js';
import { settledBy } from '../time/clock.helpers.js';
import { loadPg, loadPgBoss, pgBossInsertForm } from '../peers/optional-peer.loader.js';
import type { EmailOutboxTx, OutboxSendOptions, OutboxedEmail } from './email-outbox.interface.js';
import { EmailOutboxResolvedOptions, type ResolvedEmailOutboxOptions } from './email-outbox.options.js';
import { PgBossBackend } from './pgboss.backend.js';
import { OutboxStatements } from './outbox-statement.store.js';

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

/**
 * Enqueues emails in the app's own PostgreSQL transaction (pg-boss); the outbox's worker
 * (`EmailOutboxWorker`, when `worker` is on) sends them exactly once after the commit: a rolled-back
 * transaction sends nothing. Its events (`sent`, `failed`, `rateLimited`) report what this process's worker does.
 *
 * @example
 * await dataSource.transaction(async (manager) => {
 *   const order = await manager.save(Order, { total: 42 });
 *   await this.outbox.send({ to: ['ada@example.com'], subject: `Order ${order.id}`, text: 'Thanks!' }, { tx: manager, jobId: `order:${order.id}` });
 * });
 * @publicApi
 */
@Injectable()
export class EmailOutbox
  extends EmailJobs<OutboxSendOptions, EmailOutboxTx>
  implements OnModuleInit, OnApplicationShutdown
{
  private readonly logger = new Logger('EmailOutbox');
  private boss!: PgBoss;
  private pool!: Pool;
  private ownPool = false;
  private statements!: OutboxStatements;
  private closeDeadline?: number;

  constructor(
    @Inject(EmailOutboxResolvedOptions) private readonly options: ResolvedEmailOutboxOptions,
    private readonly moduleRef: ModuleRef,
  ) {
    super({
      where: `outbox ${options.queueName}`,
      queueName: options.queueName,
      commandTimeoutMs: options.commandTimeoutMs,
      // pg-boss takes back the job of a worker that died; the job's attempts bound those too.
      limits: {
        maxAttempts: options.attempts,
        maxInterruptions: Number.MAX_SAFE_INTEGER,
        backoff: options.backoff,
      },
      engineRules: () => undefined,
    });
  }

  /** Nest lifecycle hook (connects, creates pg-boss's schema and the records' table): called by Nest, not by you. */
  async onModuleInit(): Promise<void> {
    const PgBossCtor = loadPgBoss();
    const pg = loadPg();
    this.email = findEmailService(this.moduleRef, this.options.emailService);
    const o = this.options;
    const target = describeTarget(o.connection);
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
      this.statements = new OutboxStatements(this.pool, this.ownPool);
    } catch (err) {
      await this.endOwnPool();
      throw new EmailOutboxUnavailableError(
        `${target} did not answer at boot (${(err as { code?: string }).code ?? (err as Error).message})`,
        err,
      );
    }
    this.boss = new PgBossCtor({
      db: { executeSql: (text: string, values?: unknown[]) => this.pool.query(text, values) },
      schema: o.schema,
      maintenanceIntervalSeconds: Math.ceil(o.maintenanceIntervalMs / 1000),
      // pg-boss's own rows may go once finished: the records' table keeps what `status` and reuse need.
      deleteAfterSeconds: Math.ceil(Math.max(o.keepSentForMs, o.keepFailedForMs) / 1000),
      ...o.bossOptions,
    } as unknown as PgBoss.ConstructorOptions);
    this.boss.on('error', (err: Error) => this.logger.debug(`pg-boss: ${err.message}`));
    const backend = new PgBossBackend(
      this.boss,
      this.pool,
      o,
      target,
      this.statements,
      pgBossInsertForm(PgBossCtor),
    );
    try {
      await this.boss.start();
      await this.ensureQueue();
      const warning = await backend.migrate();
      if (warning !== undefined) this.logger.warn(warning);
    } catch (err) {
      await settledBy(this.boss.stop({ graceful: false, close: false, wait: true }), Date.now() + 2000);
      await this.endOwnPool();
      throw new EmailOutboxUnavailableError(
        `pg-boss could not start on ${target} (${(err as Error).message})`,
        err,
      );
    }
    this.backend = backend;
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
   * already holds another input; EmailOutboxUnavailableError when PostgreSQL does not answer in time.
   */
  async send(input: EmailInput, options: OutboxSendOptions = {}): Promise<OutboxedEmail> {
    const { tx, ...rest } = options;
    const [sent] = await this.write([{ input, options: rest }], tx);
    return sent as OutboxedEmail;
  }

  /** Enqueues many single emails in one transaction (`tx`, or the outbox's own); all are checked first. */
  sendMany(
    items: ReadonlyArray<{ input: EmailInput; options?: Omit<OutboxSendOptions, 'tx'> }>,
    options: Pick<OutboxSendOptions, 'tx'> = {},
  ): Promise<OutboxedEmail[]> {
    return this.write(items, options.tx);
  }

  /**
   * Cancels a job no worker has taken, in `tx` when given: then it is cancelled only if that transaction
   * commits, and the job is never both sent and cancelled.
   */
  cancel(jobId: string, options: { tx?: EmailOutboxTx } = {}): Promise<EmailJobCancelResult> {
    return this.cancelJob(jobId, options.tx);
  }

  /** Moves the start of a job no worker has taken, in `tx` when given. */
  reschedule(
    jobId: string,
    when: EmailJobSchedule,
    options: { tx?: EmailOutboxTx } = {},
  ): Promise<EmailJobRescheduleResult> {
    return this.rescheduleJob(jobId, when, options.tx);
  }

  /** One delivery of a job by the outbox's worker (`EmailOutboxWorker`). @internal */
  run(jobId: string, first?: HeldJob | null): Promise<JobVerdict> {
    return this.runJob(jobId, first);
  }

  /** The engine adapter, for the outbox's worker. @internal */
  get engine(): PgBossBackend {
    return this.backend as PgBossBackend;
  }

  /** PostgreSQL answers (used by the health indicator). */
  async ping(): Promise<void> {
    if (!this.pool) throw new EmailError('EmailOutbox is not started');
    try {
      await this.pool.query('SELECT 1');
    } catch (err) {
      throw this.backend.unavailable('ping', err);
    }
  }

  /** Jobs not yet sent (waiting, delayed or retrying), for the health indicator. */
  async backlog(): Promise<number> {
    const size = (this.boss as unknown as { getQueueSize?: (n: string) => Promise<number> }).getQueueSize;
    return typeof size === 'function' ? Number(await size.call(this.boss, this.options.queueName)) : 0;
  }

  /** Nest lifecycle hook: stops pg-boss and ends the outbox's own pool, within `closeTimeoutMs` whatever PostgreSQL does. */
  async onApplicationShutdown(): Promise<void> {
    const deadline = (this.closeDeadline ??= Date.now() + this.options.closeTimeoutMs);
    if (this.boss) await settledBy(this.boss.stop({ graceful: false, close: false, wait: true }), deadline);
    await settledBy(this.endOwnPool(), deadline);
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

  private async endOwnPool(): Promise<void> {
    if (!this.ownPool || !this.pool) return;
    this.ownPool = false;
    await this.pool.end().catch(() => undefined);
  }
}

import { Inject, Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type PgBoss from 'pg-boss';
import type { EmailInput } from '../interfaces/email-input.interface.js';
import type {
  EmailJobCancelResult,
  EmailJobRescheduleResult,
  EmailJobSchedule,
} from '../interfaces/email-job.interface.js';
import { EmailJobs } from '../jobs/email-jobs.service.js';
import type { DeliveredJob, JobVerdict } from '../jobs/email-job.interface.js';
import type { EmailOutboxTx, OutboxSendOptions, OutboxedEmail } from './email-outbox.interface.js';
import { EmailOutboxResolvedOptions, type ResolvedEmailOutboxOptions } from './email-outbox.options.js';
import { OutboxBoss } from './outbox-boss.store.js';
import { PgBossBackend } from './pgboss.backend.js';

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
export class EmailOutbox extends EmailJobs<OutboxSendOptions, EmailOutboxTx> {
  constructor(
    @Inject(EmailOutboxResolvedOptions) options: ResolvedEmailOutboxOptions,
    backend: PgBossBackend,
    private readonly boss: OutboxBoss,
    moduleRef: ModuleRef,
  ) {
    // pg-boss takes back the job of a worker that died; the job's attempts bound those too.
    const engine = {
      where: `outbox ${options.queueName}`,
      queueName: options.queueName,
      maxInterruptions: Number.MAX_SAFE_INTEGER,
      engineRules: () => undefined,
    };
    super(engine, options, backend, moduleRef);
  }

  /** The pg-boss instance underneath (for dashboards and metrics). */
  get pgBoss(): PgBoss {
    return this.boss.boss;
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
  run(job: DeliveredJob): Promise<JobVerdict> {
    return this.runJob(job);
  }

  /** PostgreSQL answers (used by the health indicator). */
  async ping(): Promise<void> {
    try {
      await this.boss.ping();
    } catch (err) {
      throw this.backend.unavailable('ping', err);
    }
  }

  /** Jobs not yet sent (waiting, delayed or retrying), for the health indicator. */
  backlog(): Promise<number> {
    return this.boss.backlog();
  }
}

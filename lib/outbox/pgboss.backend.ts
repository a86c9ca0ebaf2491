import { Inject, Injectable } from '@nestjs/common';
import { EmailOutboxUnavailableError } from '../errors/email-outbox.error.js';
import type { EmailJobRecord } from '../interfaces/email-job.interface.js';
import type { EmailJobBackend, EngineFacts, HeldJob, StoredEmailJob } from '../jobs/email-job.interface.js';
import type { NewEmailJob } from '../jobs/email-job.rules.js';
import { recordOf, storedOf } from '../jobs/job-record.helpers.js';
import type { EmailOutboxTx, OutboxSendOptions } from './email-outbox.interface.js';
import { EmailOutboxResolvedOptions, type ResolvedEmailOutboxOptions } from './email-outbox.options.js';
import { OutboxBoss } from './outbox-boss.store.js';
import { pgFailureNote } from './outbox-failure.helpers.js';
import { engineIdOf, fromJsonb, jsonbOf, outboxChannel } from './outbox-sql.helpers.js';
import { type OutboxWriting, writeOutboxJobs } from './outbox-write.engine.js';
import { inPoolTransaction, type OutboxDb, outboxDbOf } from './outbox-tx.helpers.js';

/** A job as pg-boss's fetch hands it over (`includeMetadata`): its id, data and pg-boss's count of retries. */
export interface FetchedJob {
  id: string;
  stored: StoredEmailJob;
  /** pg-boss's count of the times it took the job back from a worker (its fetch counts a job fetched before). */
  takenBack: number;
}

/**
 * The outbox's engine: each job's record is its pg-boss job, written in the caller's transaction. Its `data` is
 * the record as written (`StoredEmailJob`), pg-boss's `state` where it is, its `output` the message record once
 * sent, and pg-boss's retention keeps it for `keepSentForMs` and `keepFailedForMs`. A worker's take is pg-boss's
 * fetch (SKIP LOCKED: one process each), its outcome one `UPDATE` of the row (`outboxSql.outcomes`, many at once);
 * a cancel and a reschedule are one conditional `UPDATE` of a waiting row (`outboxSql.replace`).
 */
@Injectable()
export class PgBossBackend implements EmailJobBackend<OutboxSendOptions, EmailOutboxTx> {
  readonly keyScope: readonly string[];
  /** The channel a write's transaction notifies on commit (`LISTEN`ed by the workers of this schema and queue). */
  readonly channel: string;
  private readonly queue: string;
  /** What a write needs of the engine (see `writeOutboxJobs`). */
  private readonly writing: OutboxWriting;
  /** pg-boss's fetch text is not as `fetch` expects: its jobs come with `includeMetadata`. */
  private fetchWithMetadata = false;

  constructor(
    @Inject(EmailOutboxResolvedOptions) private readonly options: ResolvedEmailOutboxOptions,
    private readonly pgBoss: OutboxBoss,
  ) {
    this.queue = options.queueName;
    this.keyScope = ['outbox', options.queueName];
    this.channel = outboxChannel(options.schema, options.queueName);
    this.writing = {
      boss: pgBoss,
      options,
      channel: this.channel,
      read: (db, jobId) => this.readWith(db, jobId),
    };
  }

  async write(
    jobs: ReadonlyArray<NewEmailJob<OutboxSendOptions>>,
    tx?: EmailOutboxTx,
  ): Promise<Array<HeldJob | null>> {
    const records = jobs.map((j) => j.record);
    const write = (db: OutboxDb) => writeOutboxJobs(this.writing, db, records);
    if (tx !== undefined) return write(outboxDbOf(tx).db);
    const jobIds = records.map((r) => r.jobId);
    return inPoolTransaction(this.pgBoss.pool, write, (what, cause, committing) =>
      this.unavailable(what, cause, jobIds, committing),
    );
  }

  async read(jobId: string, tx?: EmailOutboxTx): Promise<HeldJob | null> {
    return this.readWith(this.dbOf(tx), jobId);
  }

  async replace(held: HeldJob, next: EmailJobRecord, tx?: EmailOutboxTx): Promise<boolean> {
    const [xmin, takenBack] = held.token.split(':') as [string, string];
    if (xmin === '') return false; // archived by pg-boss 10: final
    const o = this.options;
    const values = [
      this.queue,
      engineIdOf(this.queue, next.jobId),
      xmin,
      jsonbOf(storedOf(next, Number(takenBack))),
      next.state === 'cancelled' ? 'cancel' : 'move',
      next.runAt,
      o.keepFailedForMs,
      this.channel,
      String(Date.now()),
    ];
    const { rows } = await this.dbOf(tx).executeSql(this.pgBoss.sql.replace, values);
    return Number(rows[0]?.changed) === 1;
  }

  /**
   * Up to `batchSize` due jobs, taken for this worker in pg-boss's order: pg-boss's own fetch, its statement as
   * pg-boss writes it, with one column more in what it returns (`RETURNING j.retry_count, ...`: the times pg-boss
   * gave the job back from a dead worker). pg-boss's `includeMetadata` would return it with a dozen more columns,
   * their timestamps each parsed into a `Date` (measured: a tenth of the worker's CPU per job); where the text is
   * not as this expects, the worker asks for them that way from then on.
   */
  async fetch(batchSize: number): Promise<FetchedJob[]> {
    const metadata = this.fetchWithMetadata;
    // pg-boss 10 and 11 answer a fetch whose statement failed as one that found nothing: kept here and thrown, so
    // that a failover or a statement_timeout is not mistaken for an empty queue
    let failure: unknown;
    const run = (text: string, values?: unknown[]) =>
      this.pgBoss.statements.query(text, values ?? []).catch((err: unknown) => {
        failure = err ?? new Error('the fetch failed');
        throw err;
      });
    const db: OutboxDb = {
      executeSql: (text, values) => {
        if (metadata) return run(text, values);
        const counted = text.replace(/RETURNING\s+j\./, 'RETURNING j.retry_count AS "retryCount", j.');
        if (counted === text) this.fetchWithMetadata = true;
        return run(counted, values);
      },
    };
    const options = metadata ? { batchSize, includeMetadata: true, db } : { batchSize, db };
    const rows = (await this.pgBoss.boss.fetch(this.queue, options as never)) as unknown as Array<{
      id: string;
      data: unknown;
      retryCount?: number;
    }> | null;
    if (failure !== undefined) throw failure;
    if (!metadata && this.fetchWithMetadata) return rows?.length ? this.fetchAgainAfter(rows) : [];
    return (rows ?? []).map((row) => ({
      id: String(row.id),
      stored: fromJsonb<StoredEmailJob>(row.data),
      takenBack: Number(row.retryCount ?? 0),
    }));
  }

  /** Jobs fetched without their count (pg-boss's text not as expected): given back at once, fetched again. */
  private async fetchAgainAfter(rows: Array<{ id: string }>): Promise<FetchedJob[]> {
    await this.pgBoss.statements.query(this.pgBoss.sql.outcomes, [
      this.queue,
      rows.map((r) => r.id),
      rows.map(() => 'later'),
      rows.map(() => Date.now()),
      `[${rows.map(() => 'null').join(',')}]`,
      `[${rows.map(() => 'null').join(',')}]`,
      this.options.keepFailedForMs,
      this.options.keepSentForMs,
    ]);
    return [];
  }

  /** Writes the data of a job this worker holds (`DeliveredJob.keep`), its state as it is. */
  async keep(engineId: string, record: EmailJobRecord, takenBack: number): Promise<void> {
    const data = jsonbOf(storedOf(record, takenBack));
    await this.pgBoss.statements.query(this.pgBoss.sql.keep, [this.queue, engineId, data]);
  }

  unavailable(what: string, cause: unknown, jobIds: readonly string[] = [], mayLand = false): Error {
    return new EmailOutboxUnavailableError(`${this.pgBoss.target}: ${what}${pgFailureNote(cause)}`, cause, {
      jobIds,
      mayLand,
    });
  }

  private async readWith(db: OutboxDb, jobId: string): Promise<HeldJob | null> {
    const { rows } = await db.executeSql(this.pgBoss.sql.read, [this.queue, engineIdOf(this.queue, jobId)]);
    const row = rows[0];
    if (!row) return null;
    const state = String(row.state);
    // pg-boss counts a retried take at its next fetch: a job its maintenance took back from a dead worker
    // (started, waiting again) counts it now
    const waiting = state === 'created' || state === 'retry';
    const takenBack = Number(row.retry_count) + (waiting && row.started === true ? 1 : 0);
    const facts: EngineFacts = {
      state: waiting ? 'waiting' : (state as EngineFacts['state']),
      takenBack,
      ...(row.due_ms !== null ? { dueAt: Number(row.due_ms) } : {}),
      ...(row.ended_ms !== null ? { finishedAt: Number(row.ended_ms) } : {}),
      ...(state === 'completed' ? { output: fromJsonb(row.output) } : {}),
    };
    return {
      record: recordOf(fromJsonb<StoredEmailJob>(row.data), facts),
      token: `${row.token}:${takenBack}`,
    };
  }

  private dbOf(tx: EmailOutboxTx | undefined): OutboxDb {
    return tx !== undefined
      ? outboxDbOf(tx).db
      : { executeSql: (text, values) => this.pgBoss.pool.query(text, values) as never };
  }
}

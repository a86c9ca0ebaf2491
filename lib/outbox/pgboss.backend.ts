import type PgBoss from 'pg-boss';
import type { Pool, PoolClient } from 'pg';
import { EmailError } from '../errors/email.error.js';
import { EmailOutboxUnavailableError } from '../errors/email-outbox.error.js';
import type { EmailJobRecord } from '../interfaces/email-job.interface.js';
import type { EmailJobBackend, HeldJob } from '../jobs/email-job.interface.js';
import type { NewEmailJob } from '../jobs/email-job.rules.js';
import { keepRecordUntil } from '../policy/job.policy.js';
import type { EmailOutboxTx, OutboxSendOptions } from './email-outbox.interface.js';
import type { ResolvedEmailOutboxOptions } from './email-outbox.options.js';
import type { EngineOutcome, FetchedWithRecord, OutboxSendSlots } from './outbox-engine.interface.js';
import { OutboxReplaces } from './outbox-replace.store.js';
import {
  engineIdOf,
  failedOutputOf,
  heldOf,
  outboxChannel,
  outboxSql,
  type OutboxSql,
  sentOutputOf,
} from './outbox-sql.helpers.js';
import type { OutboxStatements } from './outbox-statement.store.js';
import { holdPoolClient, inPoolTransaction, type OutboxDb, outboxDbOf } from './outbox-tx.helpers.js';

/** pg-boss retries an expired attempt (a dead worker's) by itself; the job's record bounds the attempts. */
const ENGINE_RETRY_LIMIT = 1_000_000;

/**
 * The outbox's engine: each job's record is a row of `<schema>.email_job`, written with pg-boss's job in the
 * caller's transaction; pg-boss's job only wakes a worker for it (SKIP LOCKED, one process each). Two things
 * pg-boss has no call for are one statement each on its job table: giving a taken job back for later without
 * counting an attempt, and moving a waiting job's start. The statements are in `outbox-sql.helpers.ts`, the
 * worker's coalesced compare-and-sets in `outbox-replace.store.ts`.
 */
export class PgBossBackend implements EmailJobBackend<OutboxSendOptions, EmailOutboxTx> {
  readonly keyScope: readonly string[];
  /** The channel a write's transaction notifies on commit (`LISTEN`ed by the workers of this schema and queue). */
  readonly channel: string;
  private readonly sql: OutboxSql;
  private readonly queue: string;
  private readonly replaces: OutboxReplaces;
  /** The fused fetch (`fetchWithRecords`) cannot run here: fetch with pg-boss, then read. */
  private plainFetch = false;
  /** The queue's own pg-boss table (read at `migrate`). */
  private jobTableName?: string;
  /** The worker's send slots (set by `EmailOutboxWorker`): see `replace`. @internal */
  sendSlots?: OutboxSendSlots;

  constructor(
    private readonly boss: PgBoss,
    private readonly pool: Pool,
    private readonly options: ResolvedEmailOutboxOptions,
    /** Where the connection goes, for errors (never the password). */
    private readonly target: string,
    /** The worker's statements on `pool` (named where the pool is the outbox's own). */
    private readonly statements: OutboxStatements,
    /** How this pg-boss's `insert` takes its jobs (`pgBossInsertForm`). */
    private readonly insertForm: 'jobs' | 'name',
  ) {
    this.queue = options.queueName;
    this.keyScope = ['outbox', options.queueName];
    this.sql = outboxSql(options.schema);
    this.channel = outboxChannel(options.schema, options.queueName);
    this.replaces = new OutboxReplaces(
      this.statements,
      this.sql,
      this.queue,
      (r) => this.keepUntil(r),
      (held, next) => this.replaceOne(held, next),
      (record) => this.sendSlots?.takenId(record.jobId) ?? engineIdOf(this.queue, record),
    );
  }

  /**
   * Creates the records' table, then the index that lets pg-boss's fetch read its first waiting jobs in order
   * instead of sorting them all (`indexFetchOrder`). Two processes booting at once are harmless.
   * @returns a warning for the log when the index could not be made at this boot
   */
  async migrate(): Promise<string | undefined> {
    await this.pool.query(this.sql.migrate);
    return this.indexFetchOrder();
  }

  /**
   * pg-boss 10 and 11 fetch with `ORDER BY priority DESC, created_on, id` and have no index in that order: each
   * fetch sorts every waiting job of the queue (16 ms per fetch of 10 behind 30,000 waiting jobs, measured;
   * 0.3 ms with this index), so a backlog slows the worker that should drain it. pg-boss 12 has such an index
   * (`job_i11`), and then nothing is made. Made once, on the queue's own table, only when missing (a catalog
   * read: no lock at later boots); `CREATE INDEX` holds off writes to that table while it builds, so it gives
   * up after 2 s of waiting for the table (a long transaction that wrote a job) rather than hold up the boot
   * and the app's writes: the next boot tries again.
   */
  private async indexFetchOrder(): Promise<string | undefined> {
    const { rows } = await this.pool.query(this.sql.fetchOrderIndexed, [this.queue, this.options.schema]);
    const found = rows[0] as { table_name: string; indexed: boolean } | undefined;
    this.jobTableName = found?.table_name;
    if (found === undefined || found.indexed) return undefined;
    const { client, release } = await holdPoolClient<PoolClient>(this.pool);
    try {
      await client.query('BEGIN');
      await client.query(`SET LOCAL lock_timeout = '2s'`);
      await client.query(this.sql.indexFetchOrder(found.table_name));
      await client.query('COMMIT');
      return undefined;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      return (
        `no index in pg-boss's fetch order on ${this.options.schema}.${found.table_name} yet ` +
        `(${(err as { code?: string }).code ?? (err as Error).message}): a backlog is fetched more slowly ` +
        `until a later boot makes it`
      );
    } finally {
      release();
    }
  }

  /**
   * Gives the queue's pg-boss table statistics once, if it has none when the worker finds jobs waiting. A queue's
   * first backlog often comes before autovacuum has analyzed its table (within a minute of its first changes):
   * until then the planner guesses a handful of waiting jobs, takes pg-boss's `(name, start_after)` index and
   * sorts the whole backlog at every fetch instead of reading the fetch-order index (measured: 25 ms per fetch
   * of 10 behind 20,000 jobs, 0.4 ms once analyzed). One `ANALYZE` of that table (a sample, tens of ms); where
   * it is not allowed (another role owns the table) autovacuum does it later, as before. The worker asks once.
   */
  async ensureStatistics(): Promise<void> {
    const table = this.jobTableName;
    if (table === undefined) return;
    const { rows } = await this.pool.query(this.sql.hasStatistics, [this.options.schema, table]);
    if (rows[0]?.known !== true) await this.pool.query(this.sql.analyze(table));
  }

  /** Deletes the records kept long enough (`keepSentForMs`, `keepFailedForMs`). */
  async purge(): Promise<void> {
    await this.pool.query(this.sql.purge, [this.queue]);
  }

  async write(
    jobs: ReadonlyArray<NewEmailJob<OutboxSendOptions>>,
    tx?: EmailOutboxTx,
  ): Promise<Array<HeldJob | null>> {
    const writeAll = (db: OutboxDb) =>
      this.writeMany(
        db,
        jobs.map((j) => j.record),
      );
    if (tx !== undefined) return writeAll(outboxDbOf(tx).db);
    const jobIds = jobs.map((j) => j.record.jobId);
    return inPoolTransaction(this.pool, writeAll, (what, cause, committing) =>
      this.unavailable(what, cause, jobIds, committing),
    );
  }

  /**
   * pg-boss's own fetch (its statement and rules: `batchSize`, SKIP LOCKED, its queue policies) with each
   * fetched job's record read in the same statement: pg-boss's statement, as pg-boss writes it, runs as a CTE
   * joined to the records' table (one round trip instead of two). `held` is null for a job without a record.
   * Null when the joined statement cannot run on this PostgreSQL or pg-boss (the caller then fetches with
   * pg-boss and reads with `readMany`, from then on).
   */
  async fetchWithRecords(batchSize: number): Promise<FetchedWithRecord[] | null> {
    if (this.plainFetch) return null;
    let failed: unknown;
    let joined = false;
    const db: OutboxDb = {
      executeSql: async (text, values) => {
        joined = true;
        try {
          return (await this.statements.query(this.sql.fetchJoined(text), values ?? [])) as never;
        } catch (err) {
          failed = err;
          throw err;
        }
      },
    };
    const rows = (await this.boss.fetch(this.queue, { batchSize, db } as never)) as unknown as Array<
      Record<string, unknown>
    > | null;
    if (failed !== undefined) {
      // pg-boss answers an empty fetch when its statement fails. A statement PostgreSQL rejects as written
      // (class 42: syntax, an unknown column) will never run: fetch plainly from now on.
      if (/^42/.test(String((failed as { code?: string }).code))) this.plainFetch = true;
      throw failed;
    }
    const jobs = rows ?? [];
    // A pg-boss that ran its own statement (no `db` for fetch) or handed back its own job objects: these
    // jobs' records are read apart (`held` undefined), and from now on every fetch is plain. Never "no record".
    if (!joined || jobs.some((row) => !('body' in row))) {
      this.plainFetch = true;
      return jobs.map((row) => ({ id: String(row.id), data: row.data as { jobId: string } }));
    }
    return jobs.map((row) => ({
      id: String(row.id),
      data: row.data as { jobId: string },
      held: row.body === null ? null : heldOf(row),
    }));
  }

  /** The records of many jobs in one query (a fetched batch), by job id; a job without one is absent. */
  async readMany(jobIds: readonly string[]): Promise<Map<string, HeldJob>> {
    const { rows } = await this.statements.query(this.sql.readMany, [this.queue, jobIds]);
    return new Map(rows.map((row: Record<string, unknown>) => [String(row.job_id), heldOf(row) as HeldJob]));
  }

  async read(jobId: string, tx?: EmailOutboxTx): Promise<HeldJob | null> {
    const { rows } = await this.dbOf(tx).executeSql(this.sql.read, [this.queue, jobId]);
    return heldOf(rows[0]);
  }

  async replace(held: HeldJob, next: EmailJobRecord, tx?: EmailOutboxTx): Promise<boolean> {
    if (tx !== undefined) return this.replaceOne(held, next, tx);
    const slots = this.sendSlots;
    // The job layer writes an attempt's outcome (from `active` to anything else) once its send answered:
    // the worker's send slot frees now, not after the write (a no-op for a job that holds none).
    if (slots && held.record.state === 'active' && next.state !== 'active') slots.sendEnded(next.jobId);
    const changed = await this.replaces.replace(held, next);
    // A claim: the record says `active` with the attempt counted; the send starts once a slot is free.
    if (changed && slots && next.state === 'active') await slots.sendStarting(next.jobId);
    return changed;
  }

  /** True (once) when the statement that wrote this job's final record also ended its pg-boss job. */
  takeEnded(engineId: string): boolean {
    return this.replaces.takeEnded(engineId);
  }

  /** Each replace adds one to the row's version, the token. */
  tokenAfter(held: HeldJob): string {
    return String(BigInt(held.token) + 1n);
  }

  async moveEngineJob(record: EmailJobRecord, atMs: number | 'cancelled', tx?: EmailOutboxTx): Promise<void> {
    const id = engineIdOf(this.queue, record);
    const db = this.dbOf(tx);
    if (atMs === 'cancelled') {
      await db.executeSql(this.sql.cancelWaiting, [this.queue, id]);
      return;
    }
    await db.executeSql(this.sql.moveStart, [this.queue, id, atMs, this.channel, String(Date.now())]);
  }

  /** Gives a taken job back to start at `atMs`, without pg-boss counting an attempt. */
  async putBack(engineId: string, atMs: number): Promise<void> {
    await this.statements.query(this.sql.putBack, [this.queue, engineId, atMs]);
  }

  /**
   * Ends taken jobs in pg-boss's terms (for its dashboards): one `UPDATE` for the completed ones and one for the
   * failed ones (pg-boss's own `complete` and `fail` take many ids but one output; this keeps each job's own).
   */
  async finishMany(jobs: ReadonlyArray<{ engineId: string; outcome: EngineOutcome }>): Promise<void> {
    const outputOf = (j: (typeof jobs)[number]) => {
      const o = j.outcome;
      return o && 'error' in o ? failedOutputOf(o.error, j.engineId) : o ? sentOutputOf(o.record) : {};
    };
    const update = (state: 'completed' | 'failed', list: typeof jobs) =>
      list.length > 0 &&
      this.statements.query(this.sql.finish(state), [
        this.queue,
        list.map((j) => j.engineId),
        list.map((j) => JSON.stringify(outputOf(j))),
      ]);
    const failed = (j: (typeof jobs)[number]) => j.outcome !== null && 'error' in j.outcome;
    await Promise.all([
      update(
        'completed',
        jobs.filter((j) => !failed(j)),
      ),
      update('failed', jobs.filter(failed)),
    ]);
  }

  unavailable(what: string, cause: unknown, jobIds: readonly string[] = [], mayLand = false): Error {
    const code = (cause as { code?: string } | undefined)?.code;
    return new EmailOutboxUnavailableError(`${this.target}: ${what}${code ? ` (${code})` : ''}`, cause, {
      jobIds,
      mayLand,
    });
  }

  private async replaceOne(held: HeldJob, next: EmailJobRecord, tx?: EmailOutboxTx): Promise<boolean> {
    const text = tx !== undefined ? this.sql.replaceInTx : this.sql.replaceSkipLocked;
    const values = [this.queue, next.jobId, held.token, JSON.stringify(next), this.keepUntil(next)];
    const { rows } = await this.dbOf(tx).executeSql(text, values);
    return rows.length === 1;
  }

  /**
   * Writes the records not written yet in one statement, which also wakes the workers at commit (`insertMany`),
   * then their pg-boss jobs in one `insert`: a `sendMany` of N emails costs two statements, not 2N, each planned
   * once. A job id already written, before this call or earlier in it, answers its stored record; a new one
   * answers null.
   */
  private async writeMany(db: OutboxDb, records: readonly EmailJobRecord[]): Promise<Array<HeldJob | null>> {
    // In job id order (a stable sort: the first item of an id stays first), so that two calls writing the same
    // ids at once wait for each other instead of each holding one the other needs (a deadlock).
    const sorted = [...records].sort((a, b) => (a.jobId < b.jobId ? -1 : a.jobId > b.jobId ? 1 : 0));
    const values = [
      this.queue,
      JSON.stringify(sorted), // each record's JSON once: PostgreSQL keeps each element's text as written
      JSON.stringify(sorted.map((r) => [r.jobId, this.keepUntil(r), r.runAt])),
      this.channel,
      String(Date.now()),
    ];
    const added = await db.executeSql(this.sql.insertMany, values);
    const fresh = new Set(added.rows.map((row) => String(row.job_id)));
    const held: Array<HeldJob | null> = [];
    const created: EmailJobRecord[] = [];
    for (const record of records) {
      // The first item of a job id is the one written; a later one with the same id reads it.
      if (fresh.delete(record.jobId)) {
        created.push(record);
        held.push(null);
      } else {
        held.push(heldOf((await db.executeSql(this.sql.read, [this.queue, record.jobId])).rows[0]));
      }
    }
    if (created.length > 0) await this.createEngineJobs(db, created);
    return held;
  }

  /**
   * The pg-boss jobs of new records, in one `insert` (pg-boss 10: `insert(jobs, options)`; 11 and later:
   * `insert(name, jobs, options)`). pg-boss writes nothing for a queue it does not know, and pg-boss 10 and 11
   * answer no ids: unless the client tells how many rows the INSERT wrote, or pg-boss lists them all, the jobs are
   * counted, and a job missing fails the write (the caller's transaction is then rolled back), so that an email
   * never vanishes silently.
   */
  private async createEngineJobs(db: OutboxDb, records: readonly EmailJobRecord[]): Promise<void> {
    const o = this.options;
    const now = Date.now();
    const jobs = records.map((record) => ({
      id: engineIdOf(this.queue, record),
      name: o.queueName,
      data: { jobId: record.jobId },
      retryLimit: ENGINE_RETRY_LIMIT,
      retryDelay: 1,
      expireInSeconds: Math.ceil(o.attemptTimeoutMs / 1000),
      ...(record.runAt > now ? { startAfter: new Date(record.runAt).toISOString() } : {}),
    }));
    // The rows pg-boss's INSERT wrote, where the client tells (pg, Knex on pg): then nothing is counted.
    let inserted: number | undefined;
    const counting: OutboxDb = {
      executeSql: async (text, values) => {
        const result = await db.executeSql(text, values);
        inserted = typeof result.rowCount === 'number' ? result.rowCount : undefined;
        return result;
      },
    };
    const insert = this.boss.insert as unknown as (...args: unknown[]) => Promise<unknown>;
    const answer = await (this.insertForm === 'name'
      ? insert.call(this.boss, o.queueName, jobs, { db: counting, returnId: true })
      : insert.call(this.boss, jobs, { db: counting }));
    const ids = jobs.map((j) => j.id);
    if (inserted === ids.length || (Array.isArray(answer) && answer.length === ids.length)) return;
    const { rows } = await db.executeSql(this.sql.countEngineJobs, [this.queue, JSON.stringify(ids)]);
    const written = Number(rows[0]?.n ?? 0);
    if (written < ids.length) {
      const named = records.slice(0, 10).map((r) => r.jobId);
      const more = records.length > named.length ? ` and ${records.length - named.length} more` : '';
      throw new EmailError(
        `pg-boss wrote ${written} of ${ids.length} jobs (${named.join(', ')}${more}) in queue ` +
          `${o.queueName} (schema ${o.schema}): does the queue exist?`,
      );
    }
  }

  private dbOf(tx: EmailOutboxTx | undefined): OutboxDb {
    return tx !== undefined
      ? outboxDbOf(tx).db
      : { executeSql: (text, values) => this.pool.query(text, values) as never };
  }

  private keepUntil(record: EmailJobRecord): number {
    const o = this.options;
    return keepRecordUntil(record, { sentMs: o.keepSentForMs, failedMs: o.keepFailedForMs }, Date.now());
  }
}

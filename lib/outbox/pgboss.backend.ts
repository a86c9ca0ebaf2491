import { createHash } from 'node:crypto';
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
import { type OutboxDb, outboxDbOf, pgDb } from './outbox-tx.helpers.js';

/** pg-boss retries an expired attempt (a dead worker's) by itself; the job's record bounds the attempts. */
const ENGINE_RETRY_LIMIT = 1_000_000;

/**
 * The outbox's engine: each job's record is a row of `<schema>.email_job` (its JSON as text, so that a
 * NUL in an email is kept as it is), written with pg-boss's job in the caller's transaction; pg-boss's
 * job only wakes a worker for it (SKIP LOCKED, one process each). Two things pg-boss has no call for are
 * one statement each on its job table: giving a taken job back for later without counting an attempt,
 * and moving a waiting job's start.
 */
export class PgBossBackend implements EmailJobBackend<OutboxSendOptions, EmailOutboxTx> {
  readonly keyScope: readonly string[];
  /** The channel a write's transaction notifies on commit (`LISTEN`ed by the workers of this schema and queue). */
  readonly channel: string;
  private readonly table: string;
  private readonly jobTable: string;
  /**
   * Replaces outside a transaction waiting for the next statement, and whether one is under way, in two
   * lanes: claims (a record becomes `active`) and everything else (outcomes, cancels), so that a batch's
   * claims never wait behind other jobs' outcomes.
   */
  private readonly replacing: [PendingReplace[], PendingReplace[]] = [[], []];
  private readonly replacingNow = [false, false];
  /** pg-boss ids of jobs ended in pg-boss by the statement that wrote their final record (see `takeEnded`). */
  private readonly endedWithRecord = new Set<string>();
  /** The fused fetch (`fetchWithRecords`) cannot run here: fetch with pg-boss, then read. */
  private plainFetch = false;
  /** The worker's send slots (set by `EmailOutboxWorker`): see `replace`. @internal */
  sendSlots?: OutboxSendSlots;

  constructor(
    private readonly boss: PgBoss,
    private readonly pool: Pool,
    private readonly options: ResolvedEmailOutboxOptions,
    /** Where the connection goes, for errors (never the password). */
    private readonly target: string,
  ) {
    this.keyScope = ['outbox', options.queueName];
    this.table = `"${options.schema}".email_job`;
    this.jobTable = `"${options.schema}".job`;
    this.channel = outboxChannel(options.schema, options.queueName);
  }

  /** Creates the records' table (two processes booting at once are harmless). */
  async migrate(): Promise<void> {
    await this.pool.query(
      `CREATE TABLE IF NOT EXISTS ${this.table} (queue text NOT NULL, job_id text NOT NULL, ` +
        `version bigint NOT NULL DEFAULT 1, body text NOT NULL, keep_until timestamptz NOT NULL, ` +
        `PRIMARY KEY (queue, job_id))`,
    );
  }

  /** Deletes the records kept long enough (`keepSentForMs`, `keepFailedForMs`). */
  async purge(): Promise<void> {
    await this.pool.query(`DELETE FROM ${this.table} WHERE queue = $1 AND keep_until < now()`, [
      this.options.queueName,
    ]);
  }

  async write(
    jobs: ReadonlyArray<NewEmailJob<OutboxSendOptions>>,
    tx?: EmailOutboxTx,
  ): Promise<Array<HeldJob | null>> {
    const writeAll = async (db: OutboxDb) => {
      const held: Array<HeldJob | null> = [];
      for (const job of jobs) held.push(await this.writeOne(db, job.record));
      const dueMs = jobs.reduce(
        (min, j, i) => (held[i] === null ? Math.min(min, j.record.runAt) : min),
        Infinity,
      );
      if (dueMs !== Infinity) await this.notify(db, dueMs);
      return held;
    };
    if (tx !== undefined) return writeAll(outboxDbOf(tx).db);
    return this.inOwnTransaction(
      writeAll,
      jobs.map((j) => j.record.jobId),
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
          return (await this.pool.query(
            `WITH fetched AS (${text}) SELECT fetched.id, fetched.data, r.version, r.body FROM fetched ` +
              `LEFT JOIN ${this.table} r ON r.queue = $1 AND r.job_id = fetched.data->>'jobId'`,
            values,
          )) as never;
        } catch (err) {
          failed = err;
          throw err;
        }
      },
    };
    const rows = (await this.boss.fetch(this.options.queueName, {
      batchSize,
      db,
    } as never)) as unknown as Array<Record<string, unknown>> | null;
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
    const { rows } = await this.pool.query(
      `SELECT job_id, version, body FROM ${this.table} WHERE queue = $1 AND job_id = ANY($2::text[])`,
      [this.options.queueName, jobIds],
    );
    return new Map(rows.map((row: Record<string, unknown>) => [String(row.job_id), heldOf(row) as HeldJob]));
  }

  async read(jobId: string, tx?: EmailOutboxTx): Promise<HeldJob | null> {
    const lock = tx !== undefined ? ' FOR UPDATE' : '';
    const { rows } = await this.dbOf(tx).executeSql(
      `SELECT version, body FROM ${this.table} WHERE queue = $1 AND job_id = $2${lock}`,
      [this.options.queueName, jobId],
    );
    return heldOf(rows[0]);
  }

  async replace(held: HeldJob, next: EmailJobRecord, tx?: EmailOutboxTx): Promise<boolean> {
    if (tx !== undefined) return this.replaceOne(held, next, tx);
    const slots = this.sendSlots;
    // The job layer writes an attempt's outcome (from `active` to anything else) once its send answered:
    // the worker's send slot frees now, not after the write (a no-op for a job that holds none).
    if (slots && held.record.state === 'active' && next.state !== 'active') slots.sendEnded(next.jobId);
    const changed = await this.replaceTogether(held, next);
    // A claim: the record says `active` with the attempt counted; the send starts once a slot is free.
    if (changed && slots && next.state === 'active') await slots.sendStarting(next.jobId);
    return changed;
  }

  /**
   * True (once) when the statement that wrote this job's final record (sent, failed) also ended its pg-boss
   * job: the worker then has nothing left to write for it.
   */
  takeEnded(engineId: string): boolean {
    return this.endedWithRecord.delete(engineId);
  }

  private async replaceOne(held: HeldJob, next: EmailJobRecord, tx?: EmailOutboxTx): Promise<boolean> {
    const values = [
      this.options.queueName,
      next.jobId,
      held.token,
      JSON.stringify(next),
      this.keepUntil(next),
    ];
    const set = `SET version = version + 1, body = $4, keep_until = to_timestamp($5 / 1000.0)`;
    const match = `queue = $1 AND job_id = $2 AND version = $3`;
    // Outside a transaction (a worker), a row another transaction holds is skipped, never waited for.
    const text =
      tx !== undefined
        ? `UPDATE ${this.table} ${set} WHERE ${match} RETURNING version`
        : `WITH held AS (SELECT job_id FROM ${this.table} WHERE ${match} FOR UPDATE SKIP LOCKED) ` +
          `UPDATE ${this.table} t ${set} FROM held WHERE t.queue = $1 AND t.job_id = held.job_id RETURNING t.version`;
    const { rows } = await this.dbOf(tx).executeSql(text, values);
    return rows.length === 1;
  }

  /**
   * Outside a transaction (the worker's claims and outcomes, a cancel without `tx`), the replaces that arrive
   * while one statement is under way go together in the next: one `UPDATE` for all, each row still compared
   * on its own version and skipped when another transaction holds it, each caller told whether its own row
   * changed. Never two of one job in one statement; a statement that fails is tried again row by row. (A
   * job's row in both lanes at once, a claim and a cancel, is still one change: the other sees it locked or
   * its version moved, and says false.)
   */
  private replaceTogether(held: HeldJob, next: EmailJobRecord): Promise<boolean> {
    const lane = next.state === 'active' ? 0 : 1;
    return new Promise<boolean>((resolve, reject) => {
      this.replacing[lane].push({ held, next, resolve, reject });
      if (this.replacingNow[lane]) return;
      this.replacingNow[lane] = true;
      // After the current turn of the event loop: the claims of a whole fetched batch, made in one turn,
      // go in one statement.
      setImmediate(() => void this.flushReplaces(lane));
    });
  }

  private async flushReplaces(lane: 0 | 1): Promise<void> {
    try {
      while (this.replacing[lane].length > 0) {
        const batch: PendingReplace[] = [];
        const later: PendingReplace[] = [];
        const ids = new Set<string>();
        for (const r of this.replacing[lane]) {
          if (ids.has(r.next.jobId)) {
            later.push(r);
            continue;
          }
          ids.add(r.next.jobId);
          batch.push(r);
        }
        this.replacing[lane] = later;
        try {
          // A final record (sent, failed) ends its pg-boss job in the same statement, as `finishMany` would:
          // one write per finished job instead of two, and the two can never disagree.
          const ends = batch.map((r) => engineEndOf(r.held.record, r.next));
          const engineIds = ends.map((e, i) =>
            e ? this.engineIdOf((batch[i] as PendingReplace).next) : null,
          );
          const { rows } = await this.pool.query(
            `WITH d AS (SELECT * FROM unnest($2::text[], $3::bigint[], $4::text[], $5::float8[], $6::uuid[], $7::text[], $8::jsonb[]) ` +
              `AS d(job_id, version, body, keep_ms, engine_id, engine_state, output)), ` +
              `held AS (SELECT d.* FROM ${this.table} t JOIN d ON t.job_id = d.job_id AND t.version = d.version ` +
              `WHERE t.queue = $1 FOR UPDATE OF t SKIP LOCKED), ` +
              `changed AS (UPDATE ${this.table} t SET version = t.version + 1, body = held.body, keep_until = to_timestamp(held.keep_ms / 1000.0) ` +
              `FROM held WHERE t.queue = $1 AND t.job_id = held.job_id RETURNING t.job_id), ` +
              `ended AS (UPDATE ${this.jobTable} j SET state = held.engine_state::"${this.options.schema}".job_state, ` +
              `completed_on = now(), output = held.output FROM held JOIN changed ON changed.job_id = held.job_id ` +
              `WHERE held.engine_id IS NOT NULL AND j.name = $1 AND j.id = held.engine_id AND j.state = 'active') ` +
              `SELECT job_id FROM changed`,
            [
              this.options.queueName,
              batch.map((r) => r.next.jobId),
              batch.map((r) => r.held.token),
              batch.map((r) => JSON.stringify(r.next)),
              batch.map((r) => this.keepUntil(r.next)),
              engineIds,
              ends.map((e) => e?.state ?? null),
              ends.map((e) => (e ? JSON.stringify(e.output) : null)),
            ],
          );
          const changed = new Set(rows.map((row: Record<string, unknown>) => String(row.job_id)));
          batch.forEach((r, i) => {
            const engineId = engineIds[i];
            if (engineId && changed.has(r.next.jobId)) this.endedWithRecord.add(engineId);
            r.resolve(changed.has(r.next.jobId));
          });
        } catch {
          for (const r of batch) await this.replaceOne(r.held, r.next).then(r.resolve, r.reject);
        }
      }
    } finally {
      this.replacingNow[lane] = false;
    }
  }

  /** Each replace adds one to the row's version, the token. */
  tokenAfter(held: HeldJob): string {
    return String(BigInt(held.token) + 1n);
  }

  async moveEngineJob(record: EmailJobRecord, atMs: number | 'cancelled', tx?: EmailOutboxTx): Promise<void> {
    const id = this.engineIdOf(record);
    const db = this.dbOf(tx);
    if (atMs === 'cancelled') {
      await this.boss.cancel(this.options.queueName, id, { db } as never);
      return;
    }
    await db.executeSql(
      `UPDATE ${this.jobTable} SET start_after = to_timestamp($3 / 1000.0) WHERE name = $1 AND id = $2 AND state < 'active'`,
      [this.options.queueName, id, atMs],
    );
    await this.notify(db, atMs);
  }

  /** Gives a taken job back to start at `atMs`, without pg-boss counting an attempt. */
  async putBack(engineId: string, atMs: number): Promise<void> {
    await this.pool.query(
      `UPDATE ${this.jobTable} SET state = 'created', started_on = NULL, start_after = to_timestamp($3 / 1000.0) ` +
        `WHERE name = $1 AND id = $2 AND state = 'active'`,
      [this.options.queueName, engineId, atMs],
    );
  }

  /** Ends a taken job in pg-boss's terms (for its dashboards): completed, or failed with the error. */
  finish(engineId: string, outcome: EngineOutcome): Promise<void> {
    return this.finishMany([{ engineId, outcome }]);
  }

  /**
   * Ends many taken jobs at once, in pg-boss's terms: one `UPDATE` of pg-boss's job table for the completed
   * ones and one for the failed ones (pg-boss's own `complete` and `fail` take many ids but one output; this
   * keeps each job's own: its record, or its error).
   */
  async finishMany(jobs: ReadonlyArray<{ engineId: string; outcome: EngineOutcome }>): Promise<void> {
    const done = jobs.filter((j) => !(j.outcome && 'error' in j.outcome));
    const failed = jobs.filter((j) => j.outcome && 'error' in j.outcome);
    const update = (
      state: 'completed' | 'failed',
      list: typeof jobs,
      output: (o: EngineOutcome) => unknown,
    ) =>
      this.pool.query(
        `UPDATE ${this.jobTable} j SET state = '${state}', completed_on = now(), output = d.output ` +
          `FROM unnest($2::uuid[], $3::jsonb[]) AS d(id, output) WHERE j.name = $1 AND j.id = d.id AND j.state = 'active'`,
        [
          this.options.queueName,
          list.map((j) => j.engineId),
          list.map((j) => JSON.stringify(output(j.outcome))),
        ],
      );
    await Promise.all([
      done.length > 0 && update('completed', done, (o) => (o && 'record' in o ? { record: o.record } : {})),
      failed.length > 0 &&
        update('failed', failed, (o) => {
          const error = (o as { error: Error }).error;
          return { message: error.message, name: error.name };
        }),
    ]);
  }

  unavailable(what: string, cause: unknown, jobIds: readonly string[] = [], mayLand = false): Error {
    const code = (cause as { code?: string } | undefined)?.code;
    return new EmailOutboxUnavailableError(`${this.target}: ${what}${code ? ` (${code})` : ''}`, cause, {
      jobIds,
      mayLand,
    });
  }

  private async writeOne(db: OutboxDb, record: EmailJobRecord): Promise<HeldJob | null> {
    const { rows } = await db.executeSql(
      `INSERT INTO ${this.table} (queue, job_id, body, keep_until) VALUES ($1, $2, $3, to_timestamp($4 / 1000.0)) ` +
        `ON CONFLICT (queue, job_id) DO NOTHING RETURNING version`,
      [this.options.queueName, record.jobId, JSON.stringify(record), this.keepUntil(record)],
    );
    if (rows.length === 0) {
      const held = await db.executeSql(
        `SELECT version, body FROM ${this.table} WHERE queue = $1 AND job_id = $2`,
        [this.options.queueName, record.jobId],
      );
      return heldOf(held.rows[0]);
    }
    const o = this.options;
    const created = await this.boss.send(o.queueName, { jobId: record.jobId }, {
      id: this.engineIdOf(record),
      db,
      retryLimit: ENGINE_RETRY_LIMIT,
      retryDelay: 1,
      expireInSeconds: Math.ceil(o.attemptTimeoutMs / 1000),
      ...(record.runAt > Date.now() ? { startAfter: new Date(record.runAt) } : {}),
    } as PgBoss.SendOptions & { db: OutboxDb });
    // pg-boss writes nothing for a queue it does not know: never let an email vanish silently.
    if (created === null)
      throw new EmailError(
        `pg-boss wrote no job for ${record.jobId} in queue ${o.queueName} (schema ${o.schema}): does the queue exist?`,
      );
    return null;
  }

  /**
   * Wakes the workers when the write's transaction commits (PostgreSQL delivers a NOTIFY only then, never after
   * a rollback): the payload is empty for a job due now, else the time in ms it is due.
   */
  private async notify(db: OutboxDb, dueMs: number): Promise<void> {
    // In FROM, so that the answer is a plain integer for every client (a void column puzzles some ORMs).
    await db.executeSql(`SELECT 1 AS notified FROM pg_notify($1, $2)`, [
      this.channel,
      dueMs > Date.now() ? String(Math.ceil(dueMs)) : '',
    ]);
  }

  private async inOwnTransaction<T>(
    write: (db: OutboxDb) => Promise<T>,
    jobIds: readonly string[],
  ): Promise<T> {
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw this.unavailable('no connection', err, jobIds, false);
    }
    let committing = false;
    try {
      await client.query('BEGIN');
      const result = await write(pgDb(client as unknown as Record<string, unknown>, false));
      committing = true;
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      if (err instanceof EmailError) throw err;
      throw this.unavailable((err as Error).message, err, jobIds, committing);
    } finally {
      client.release();
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

  /** pg-boss's id of a job's record: a UUID from the job id and the record's birth, the same in every process. */
  private engineIdOf(record: EmailJobRecord): string {
    const h = createHash('sha256')
      .update(JSON.stringify([this.options.queueName, record.jobId, record.createdAt]))
      .digest('hex');
    const variant = ((parseInt(h[16] as string, 16) & 0x3) | 0x8).toString(16);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
  }
}

interface PendingReplace {
  held: HeldJob;
  next: EmailJobRecord;
  resolve: (changed: boolean) => void;
  reject: (err: unknown) => void;
}

/** How a taken job ended, for pg-boss's job row: sent (its record), failed (the error), or dropped (null). */
export type EngineOutcome = { record: unknown } | { error: Error } | null;

/**
 * A job as `fetchWithRecords` hands it over: pg-boss's id and data, and the job's record (null: none;
 * undefined: not read with it, read it apart).
 */
export interface FetchedWithRecord {
  id: string;
  data: { jobId: string };
  held?: HeldJob | null;
}

/**
 * The worker's send slots, as the backend sees an attempt go by: `sendStarting` once a claim is written
 * (resolves when a slot is free), `sendEnded` when the attempt's outcome is about to be written.
 */
export interface OutboxSendSlots {
  sendStarting(jobId: string): Promise<void>;
  sendEnded(jobId: string): void;
}

/**
 * The end of the pg-boss job that goes with writing `next` over a taken job's record (`prev`, active): completed
 * with the record for `sent`, failed with the error (its name and message, as the worker's verdict carries it)
 * for `failed`; null otherwise (a claim, a retry, a pause, a cancel: pg-boss's job stays as it is).
 */
function engineEndOf(
  prev: EmailJobRecord,
  next: EmailJobRecord,
): { state: 'completed' | 'failed'; output: unknown } | null {
  if (next.state === 'sent' && prev.state === 'active')
    return { state: 'completed', output: { record: next.record } };
  if (next.state === 'failed' && (prev.state === 'active' || prev.state === 'waiting'))
    return {
      state: 'failed',
      output: {
        message: next.error?.message ?? `Email job ${next.jobId} failed`,
        name: next.error?.name ?? 'EmailError',
      },
    };
  return null;
}

/**
 * The NOTIFY channel of an outbox's schema and queue: `email_outbox_<schema>_<queue>`, other characters as `_`,
 * shortened with a hash of both names past PostgreSQL's 63 characters.
 */
export function outboxChannel(schema: string, queueName: string): string {
  const name = `email_outbox_${schema}_${queueName}`.replace(/[^A-Za-z0-9_]/g, '_');
  if (name.length <= 63) return name;
  const hash = createHash('sha256')
    .update(JSON.stringify([schema, queueName]))
    .digest('hex')
    .slice(0, 8);
  return `${name.slice(0, 54)}_${hash}`;
}

function heldOf(row: Record<string, unknown> | undefined): HeldJob | null {
  if (!row) return null;
  return { record: JSON.parse(String(row.body)) as EmailJobRecord, token: String(row.version) };
}

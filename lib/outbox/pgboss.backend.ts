import { Inject, Injectable } from '@nestjs/common';
import { EmailError } from '../errors/email.error.js';
import { EmailOutboxUnavailableError } from '../errors/email-outbox.error.js';
import type { EmailJobRecord } from '../interfaces/email-job.interface.js';
import type { EmailJobBackend, EngineFacts, HeldJob, StoredEmailJob } from '../jobs/email-job.interface.js';
import type { NewEmailJob } from '../jobs/email-job.rules.js';
import { recordOf, storedOf } from '../jobs/job-record.helpers.js';
import type { EmailOutboxTx, OutboxSendOptions } from './email-outbox.interface.js';
import { EmailOutboxResolvedOptions, type ResolvedEmailOutboxOptions } from './email-outbox.options.js';
import { OutboxBoss } from './outbox-boss.store.js';
import { engineIdOf, insertAndWake, outboxChannel } from './outbox-sql.helpers.js';
import { inPoolTransaction, type OutboxDb, outboxDbOf } from './outbox-tx.helpers.js';

/** pg-boss retries an expired attempt (a dead worker's) by itself; the job's data bounds the attempts. */
const ENGINE_RETRY_LIMIT = 1_000_000;

/** A job as pg-boss's fetch hands it over (`includeMetadata`): its id, data and pg-boss's count of retries. */
export interface FetchedJob {
  id: string;
  stored: StoredEmailJob;
  /** pg-boss's count of the times it took the job back from a worker (its fetch counts a job fetched before). */
  takenBack: number;
}

/**
 * What jsonb can hold of a job's data or output. jsonb refuses the NUL character in a string, which an email may
 * carry (a `text` with `\u0000`): such a document is kept as its JSON text instead (`{ json }`), read back alike.
 */
export function jsonbOf(value: unknown, text = JSON.stringify(value)): string {
  return text.includes('\\u0000') ? JSON.stringify(wrapped(value, text)) : text;
}

/** The same as a value for a JSON parameter (pg-boss's insert): the value itself, unless it holds a NUL. */
export function jsonbValueOf(value: unknown): unknown {
  const text = JSON.stringify(value);
  return text.includes('\\u0000') ? wrapped(value, text) : value;
}

/** A document kept as its JSON text, its job id still beside it (where dashboards and specs look for it). */
function wrapped(value: unknown, text: string): { jobId?: unknown; json: string } {
  const jobId = (value as { jobId?: unknown } | null)?.jobId;
  return jobId === undefined ? { json: text } : { jobId, json: text };
}

/** A jsonb document as `jsonbOf` wrote it (a driver may answer it as text). */
export function fromJsonb<T>(value: unknown): T {
  const doc = typeof value === 'string' ? (JSON.parse(value) as unknown) : value;
  const wrapped = (doc as { json?: unknown } | null)?.json;
  return (typeof wrapped === 'string' ? JSON.parse(wrapped) : doc) as T;
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

  constructor(
    @Inject(EmailOutboxResolvedOptions) private readonly options: ResolvedEmailOutboxOptions,
    private readonly pgBoss: OutboxBoss,
  ) {
    this.queue = options.queueName;
    this.keyScope = ['outbox', options.queueName];
    this.channel = outboxChannel(options.schema, options.queueName);
  }

  async write(
    jobs: ReadonlyArray<NewEmailJob<OutboxSendOptions>>,
    tx?: EmailOutboxTx,
  ): Promise<Array<HeldJob | null>> {
    const records = jobs.map((j) => j.record);
    if (tx !== undefined) return this.writeMany(outboxDbOf(tx).db, records);
    const jobIds = records.map((r) => r.jobId);
    return inPoolTransaction(
      this.pgBoss.pool,
      (db) => this.writeMany(db, records),
      (what, cause, committing) => this.unavailable(what, cause, jobIds, committing),
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

  /** Up to `batchSize` due jobs, taken for this worker in pg-boss's order (pg-boss's own fetch). */
  async fetch(batchSize: number): Promise<FetchedJob[]> {
    const rows = (await this.pgBoss.boss.fetch(this.queue, {
      batchSize,
      includeMetadata: true,
    } as never)) as unknown as Array<{
      id: string;
      data: unknown;
      retryCount?: number;
      retry_count?: number;
    }> | null;
    return (rows ?? []).map((row) => ({
      id: String(row.id),
      stored: fromJsonb<StoredEmailJob>(row.data),
      takenBack: Number(row.retryCount ?? row.retry_count ?? 0),
    }));
  }

  /** Writes the data of a job this worker holds (`DeliveredJob.keep`), its state as it is. */
  async keep(engineId: string, record: EmailJobRecord, takenBack: number): Promise<void> {
    const data = jsonbOf(storedOf(record, takenBack));
    await this.pgBoss.statements.query(this.pgBoss.sql.keep, [this.queue, engineId, data]);
  }

  unavailable(what: string, cause: unknown, jobIds: readonly string[] = [], mayLand = false): Error {
    const code = (cause as { code?: string } | undefined)?.code;
    return new EmailOutboxUnavailableError(
      `${this.pgBoss.target}: ${what}${code ? ` (${code})` : ''}`,
      cause,
      {
        jobIds,
        mayLand,
      },
    );
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

  /**
   * The jobs of a call, in one statement whatever their number: pg-boss's own `insert` (its rules and columns),
   * run so that it answers the ids it wrote and wakes the workers at commit (`insertAndWake`). A job id written
   * before (by this call, another transaction, or an earlier job pg-boss 10 archived) answers that job's record.
   * Written in job id order, so that two calls writing the same ids at once wait for each other instead of each
   * holding one the other needs (a deadlock).
   */
  private async writeMany(db: OutboxDb, records: readonly EmailJobRecord[]): Promise<Array<HeldJob | null>> {
    const now = Date.now();
    const firsts = new Map<string, EmailJobRecord>();
    for (const r of records) if (!firsts.has(r.jobId)) firsts.set(r.jobId, r);
    const ordered = [...firsts.values()].sort((a, b) => (a.jobId < b.jobId ? -1 : a.jobId > b.jobId ? 1 : 0));
    const bossJobs = ordered.map((r) => this.bossJobOf(r, now));
    // Each job id's advisory lock, taken in this order before any row is written (pg-boss's INSERT writes its rows
    // in the order its plan reads them, not in the order given).
    const locks = JSON.stringify(ordered.map((r) => `${this.queue} ${r.jobId}`));
    let added = new Set<string>();
    const writing: OutboxDb = {
      executeSql: async (text, values = []) => {
        const statement = insertAndWake(text, values.length);
        if (!statement.locking) await db.executeSql(this.pgBoss.sql.lockJobIds, [locks]);
        const extra = statement.locking ? [locks] : [];
        const { rows } = await db.executeSql(statement.text, [
          ...values,
          this.channel,
          String(now),
          ...extra,
        ]);
        added = new Set(rows.map((row) => String(row.id)));
        return { rows: [] };
      },
    };
    const insert = this.pgBoss.boss.insert as unknown as (...args: unknown[]) => Promise<unknown>;
    await (this.pgBoss.insertForm === 'name'
      ? insert.call(this.pgBoss.boss, this.queue, bossJobs, { db: writing })
      : insert.call(this.pgBoss.boss, bossJobs, { db: writing }));
    await this.keepArchived(db, added);
    const held = new Map<string, HeldJob | null>();
    const missing: EmailJobRecord[] = [];
    for (const r of ordered) {
      const id = engineIdOf(this.queue, r.jobId);
      held.set(r.jobId, added.has(id) ? null : await this.readWith(db, r.jobId));
      if (!added.has(id) && held.get(r.jobId) === null) missing.push(r);
    }
    if (missing.length > 0) throw this.missing(missing, ordered.length);
    // The first item of a job id is the one written; a later one with the same id reads it.
    const seen = new Set<string>();
    return records.map((r) => {
      const first = !seen.has(r.jobId);
      seen.add(r.jobId);
      const kept = held.get(r.jobId) ?? null;
      return first ? kept : (kept ?? { record: firsts.get(r.jobId)!, token: ':0' });
    });
  }

  /**
   * pg-boss 10 moves a finished job to its `archive`, where its job id is still the same job: a job id written
   * again meanwhile is taken out of this write (its first job answers it), so that it is never a second email.
   */
  private async keepArchived(db: OutboxDb, added: Set<string>): Promise<void> {
    const sql = this.pgBoss.sql;
    if (sql.archived === undefined || added.size === 0) return;
    const ids = JSON.stringify([...added]);
    const { rows } = await db.executeSql(sql.archived, [this.queue, ids]);
    if (rows.length === 0) return;
    const archived = rows.map((row) => String(row.id));
    await db.executeSql(sql.unwrite, [this.queue, JSON.stringify(archived)]);
    for (const id of archived) added.delete(id);
  }

  /** pg-boss's job for a new record: its data the record as written, its retention from the record's. */
  private bossJobOf(record: EmailJobRecord, now: number) {
    const o = this.options;
    const keepSeconds = Math.max(1, Math.ceil(o.keepFailedForMs / 1000));
    return {
      id: engineIdOf(this.queue, record.jobId),
      name: this.queue,
      data: jsonbValueOf(storedOf(record, 0)),
      retryLimit: ENGINE_RETRY_LIMIT,
      retryDelay: 1,
      expireInSeconds: Math.ceil(o.attemptTimeoutMs / 1000),
      ...(record.runAt > now ? { startAfter: new Date(record.runAt).toISOString() } : {}),
      // a job not taken is kept this long past its start: pg-boss 10 `keepUntil`, 11 `retentionSeconds`
      keepUntil: new Date(Math.max(record.runAt, now) + o.keepFailedForMs).toISOString(),
      retentionSeconds: keepSeconds,
      // pg-boss 11 keeps an ended job this long (a sent one's is set when it is sent)
      deleteAfterSeconds: keepSeconds,
    };
  }

  /**
   * pg-boss wrote nothing for some jobs (a queue it does not know): the write fails, naming them, so that an email
   * never vanishes silently (the caller's transaction is then rolled back; without `tx`, nothing is kept).
   */
  private missing(records: readonly EmailJobRecord[], of: number): EmailError {
    const o = this.options;
    const named = records.slice(0, 10).map((r) => r.jobId);
    const more = records.length > named.length ? ` and ${records.length - named.length} more` : '';
    return new EmailError(
      `pg-boss wrote ${of - records.length} of ${of} jobs (${named.join(', ')}${more}) in queue ` +
        `${o.queueName} (schema ${o.schema}): does the queue exist?`,
    );
  }

  private dbOf(tx: EmailOutboxTx | undefined): OutboxDb {
    return tx !== undefined
      ? outboxDbOf(tx).db
      : { executeSql: (text, values) => this.pgBoss.pool.query(text, values) as never };
  }
}

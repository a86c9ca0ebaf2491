import { EmailError } from '../errors/email.error.js';
import type { EmailJobRecord } from '../interfaces/email-job.interface.js';
import type { HeldJob } from '../jobs/email-job.interface.js';
import { storedOf } from '../jobs/job-record.helpers.js';
import type { ResolvedEmailOutboxOptions } from './email-outbox.options.js';
import type { OutboxBoss } from './outbox-boss.store.js';
import { engineIdOf, insertAndWake, jsonbValueOf } from './outbox-sql.helpers.js';
import type { OutboxDb } from './outbox-tx.helpers.js';

/** pg-boss retries an expired attempt (a dead worker's) by itself; the job's data bounds the attempts. */
const ENGINE_RETRY_LIMIT = 1_000_000;

/** What writing jobs needs of the outbox's engine. */
export interface OutboxWriting {
  boss: OutboxBoss;
  options: ResolvedEmailOutboxOptions;
  /** The channel the write's transaction notifies on commit. */
  channel: string;
  /** A job's record as `status` reads it, through `db`. */
  read: (db: OutboxDb, jobId: string) => Promise<HeldJob | null>;
}

/**
 * The jobs of a call, in one statement whatever their number: pg-boss's own `insert` (its rules and columns),
 * run so that it answers the ids it wrote and wakes the workers at commit (`insertAndWake`). A job id written
 * before (by this call, another transaction, or an earlier job pg-boss 10 archived) answers that job's record.
 * Written in job id order, so that two calls writing the same ids at once wait for each other instead of each
 * holding one the other needs (a deadlock).
 */
export async function writeOutboxJobs(
  w: OutboxWriting,
  db: OutboxDb,
  records: readonly EmailJobRecord[],
): Promise<Array<HeldJob | null>> {
  const queue = w.options.queueName;
  const now = Date.now();
  const firsts = new Map<string, EmailJobRecord>();
  for (const r of records) if (!firsts.has(r.jobId)) firsts.set(r.jobId, r);
  const ordered = [...firsts.values()].sort((a, b) => (a.jobId < b.jobId ? -1 : a.jobId > b.jobId ? 1 : 0));
  const bossJobs = ordered.map((r) => bossJobOf(w, r, now));
  // Each job id's advisory lock, taken in this order before any row is written (pg-boss's INSERT writes its rows
  // in the order its plan reads them, not in the order given).
  const locks = JSON.stringify(ordered.map((r) => `${queue} ${r.jobId}`));
  let added = new Set<string>();
  const writing: OutboxDb = {
    executeSql: async (text, values = []) => {
      const statement = insertAndWake(text, values.length);
      if (!statement.locking) await db.executeSql(w.boss.sql.lockJobIds, [locks]);
      const extra = statement.locking ? [locks] : [];
      const { rows } = await db.executeSql(statement.text, [...values, w.channel, String(now), ...extra]);
      added = new Set(rows.map((row) => String(row.id)));
      return { rows: [] };
    },
  };
  const insert = w.boss.boss.insert as unknown as (...args: unknown[]) => Promise<unknown>;
  await (w.boss.insertForm === 'name'
    ? insert.call(w.boss.boss, queue, bossJobs, { db: writing })
    : insert.call(w.boss.boss, bossJobs, { db: writing }));
  await keepArchived(w, db, added);
  const held = new Map<string, HeldJob | null>();
  const missingJobs: EmailJobRecord[] = [];
  for (const r of ordered) {
    const id = engineIdOf(queue, r.jobId);
    held.set(r.jobId, added.has(id) ? null : await w.read(db, r.jobId));
    if (!added.has(id) && held.get(r.jobId) === null) missingJobs.push(r);
  }
  if (missingJobs.length > 0) throw missing(w, missingJobs, ordered.length);
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
async function keepArchived(w: OutboxWriting, db: OutboxDb, added: Set<string>): Promise<void> {
  const queue = w.options.queueName;
  const sql = w.boss.sql;
  if (sql.archived === undefined || added.size === 0) return;
  const ids = JSON.stringify([...added]);
  const { rows } = await db.executeSql(sql.archived, [queue, ids]);
  if (rows.length === 0) return;
  const archived = rows.map((row) => String(row.id));
  await db.executeSql(sql.unwrite, [queue, JSON.stringify(archived)]);
  for (const id of archived) added.delete(id);
}

/** pg-boss's job for a new record: its data the record as written, its retention from the record's. */
function bossJobOf(w: OutboxWriting, record: EmailJobRecord, now: number) {
  const queue = w.options.queueName;
  const o = w.options;
  const keepSeconds = Math.max(1, Math.ceil(o.keepFailedForMs / 1000));
  return {
    id: engineIdOf(queue, record.jobId),
    name: queue,
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
function missing(w: OutboxWriting, records: readonly EmailJobRecord[], of: number): EmailError {
  const o = w.options;
  const named = records.slice(0, 10).map((r) => r.jobId);
  const more = records.length > named.length ? ` and ${records.length - named.length} more` : '';
  return new EmailError(
    `pg-boss wrote ${of - records.length} of ${of} jobs (${named.join(', ')}${more}) in queue ` +
      `${o.queueName} (schema ${o.schema}): does the queue exist?`,
  );
}

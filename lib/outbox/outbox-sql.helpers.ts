import { createHash } from 'node:crypto';
import type { EmailJobRecord } from '../interfaces/email-job.interface.js';
import type { HeldJob } from '../jobs/email-job.interface.js';

/**
 * The payload of the NOTIFY that wakes the workers for a job due at `due` (ms): empty when it is due by `now`
 * (ms, the writer's clock), else its due time in whole ms (the worker then looks at that time).
 */
function wakePayload(due: string, now: string): string {
  return `CASE WHEN ${due} > ${now} THEN ceil(${due})::bigint::text ELSE '' END`;
}

/**
 * The statements of the outbox's engine on one schema: the records' table (`<schema>.email_job`, each record's
 * JSON as text, so that a NUL in an email is kept as it is) and pg-boss's job table. `$1` is always the queue.
 */
export function outboxSql(schema: string) {
  const table = `"${schema}".email_job`;
  const jobTable = `"${schema}".job`;
  const set = `SET version = version + 1, body = $4, keep_until = to_timestamp($5 / 1000.0)`;
  const match = `queue = $1 AND job_id = $2 AND version = $3`;
  /** The order pg-boss's fetch takes waiting jobs in (`ORDER BY priority DESC, created_on, id`), as index columns. */
  const fetchOrder = 'name, priority DESC, created_on';
  // The rows' bodies come as one JSON array of the records ($4): each element's text is kept exactly as written
  // (the `json` type keeps its input), and the client writes no array literal (pg escapes every quote of every
  // body in one: 17 KB of strings per email, measured). Each row is found by its primary key, whatever the
  // planner thinks of the tables' size (a LATERAL lookup, then the locked row by its ctid; pg-boss's rows by
  // their ids): on tables not yet analyzed, a plain join of the batch was planned as a scan of every record
  // (4.2 ms against 0.6 ms for 26 rows, measured).
  const replaceMany = (ending: boolean) =>
    `WITH d AS (SELECT u.*, b.value::text AS body FROM unnest($2::text[], $3::bigint[], $5::float8[]` +
    (ending ? `, $6::uuid[], $7::text[], $8::jsonb[]` : '') +
    `) WITH ORDINALITY AS u(job_id, version, keep_ms${ending ? ', engine_id, engine_state, output' : ''}, ord) ` +
    `JOIN json_array_elements($4::json) WITH ORDINALITY AS b(value, ord) USING (ord)), ` +
    `held AS (SELECT d.*, l.row_id FROM d CROSS JOIN LATERAL (SELECT t.ctid AS row_id FROM ${table} t ` +
    `WHERE t.queue = $1 AND t.job_id = d.job_id AND t.version = d.version FOR UPDATE SKIP LOCKED) l), ` +
    `changed AS (UPDATE ${table} t SET version = t.version + 1, body = held.body, keep_until = to_timestamp(held.keep_ms / 1000.0) ` +
    `FROM held WHERE t.ctid = held.row_id RETURNING t.job_id)` +
    (ending
      ? `, ended AS (UPDATE ${jobTable} j SET state = held.engine_state::"${schema}".job_state, ` +
        `completed_on = now(), output = held.output FROM held JOIN changed ON changed.job_id = held.job_id ` +
        `WHERE held.engine_id IS NOT NULL AND j.name = $1 AND j.id = held.engine_id AND j.id = ANY ($6::uuid[]) ` +
        `AND j.state = 'active')`
      : '') +
    ` SELECT job_id FROM changed`;
  return {
    migrate:
      `CREATE TABLE IF NOT EXISTS ${table} (queue text NOT NULL, job_id text NOT NULL, ` +
      `version bigint NOT NULL DEFAULT 1, body text NOT NULL, keep_until timestamptz NOT NULL, ` +
      `PRIMARY KEY (queue, job_id))`,
    /**
     * The queue's own pg-boss table ($1 the queue, $2 the schema: pg-boss 10's `partition_name`, 11's and 12's
     * `table_name`) and whether an index on it leads in the order pg-boss's fetch takes jobs (pg-boss 12's
     * `job_i11` does; 10 and 11 have none, so their fetch sorts every waiting job).
     */
    fetchOrderIndexed:
      `SELECT t.name AS table_name, EXISTS (SELECT 1 FROM pg_indexes i WHERE i.schemaname = $2 ` +
      `AND i.tablename = t.name AND i.indexdef LIKE '%(${fetchOrder}%') AS indexed ` +
      `FROM (SELECT COALESCE(to_jsonb(q)->>'partition_name', to_jsonb(q)->>'table_name') AS name ` +
      `FROM "${schema}".queue q WHERE q.name = $1) t WHERE t.name IS NOT NULL`,
    /** That index, on the queue's pg-boss table `jobTableName` (`fetchOrderIndexed` names it). */
    indexFetchOrder: (jobTableName: string) =>
      `CREATE INDEX IF NOT EXISTS "${jobTableName.slice(0, 40)}_email_fetch" ON "${schema}"."${jobTableName}" ` +
      `(${fetchOrder}, id) WHERE state < 'active'`,
    /** Whether the planner has statistics on the queue's pg-boss table ($1 the schema, $2 the table). */
    hasStatistics: `SELECT EXISTS (SELECT 1 FROM pg_stats WHERE schemaname = $1 AND tablename = $2 AND attname = 'name') AS known`,
    analyze: (jobTableName: string) => `ANALYZE "${schema}"."${jobTableName}"`,
    purge: `DELETE FROM ${table} WHERE queue = $1 AND keep_until < now()`,
    /**
     * pg-boss's fetch statement as a CTE, each fetched job joined to its record by the job's own queue name (no
     * parameter of ours: pg-boss 10 passes the queue as `$1`, 11 and 12 write it into the statement's text).
     * Each record is looked up by its primary key (a LATERAL subquery; its LIMIT keeps the planner from turning
     * it back into a join): the planner cannot count the rows of pg-boss's `UPDATE ... RETURNING`, and with a
     * plain join a guess of hundreds made a fetch of 10 hash every record (64 ms at 14,000 records, measured).
     */
    fetchJoined: (bossFetch: string) =>
      `WITH fetched AS (${bossFetch}) SELECT fetched.id, fetched.data, r.version, r.body FROM fetched ` +
      `LEFT JOIN LATERAL (SELECT t.version, t.body FROM ${table} t WHERE t.queue = fetched.name ` +
      `AND t.job_id = fetched.data->>'jobId' LIMIT 1) r ON true`,
    readMany: `SELECT job_id, version, body FROM ${table} WHERE queue = $1 AND job_id = ANY($2::text[])`,
    /**
     * One record, never locked, also in the app's transaction: a `cancel` or `reschedule` that finds it too late
     * must not hold the row the worker writes the outcome to for the rest of that transaction. A change is a
     * compare-and-set (`replaceInTx`), which locks only the row it changes.
     */
    read: `SELECT version, body FROM ${table} WHERE queue = $1 AND job_id = $2`,
    /**
     * New records, all in one statement that also wakes the workers. `$2` is the records as one JSON array, each
     * element's text stored as it is (encoded once, on the client); `$3` a JSON array of `[job_id, keep_ms,
     * run_ms]`, one per record, in the same order (job id order: see `writeMany`). A job id already written is
     * left as it is and not returned. When any record was added, a `NOTIFY` on `$4` goes out at commit (see
     * `wakePayload`; `$5` is the client's clock in ms, as text). JSON and text parameters only: every `tx` kind
     * passes a string as it is (a Prisma client takes an array parameter as JSON).
     */
    insertMany:
      `WITH d AS (SELECT x.body::text AS body, x.k->>0 AS job_id, (x.k->>1)::float8 AS keep_ms, ` +
      `(x.k->>2)::float8 AS run_ms, x.ord FROM ROWS FROM (json_array_elements($2::json), ` +
      `json_array_elements($3::json)) WITH ORDINALITY AS x(body, k, ord)), ` +
      `added AS (INSERT INTO ${table} (queue, job_id, body, keep_until) ` +
      `SELECT $1, d.job_id, d.body, to_timestamp(d.keep_ms / 1000.0) FROM d ORDER BY d.ord ` +
      `ON CONFLICT (queue, job_id) DO NOTHING RETURNING job_id), ` +
      `woke AS (SELECT pg_notify($4, ${wakePayload('m.due', '$5::float8')}) ` +
      `FROM (SELECT min(d.run_ms) AS due FROM d JOIN added USING (job_id)) m WHERE m.due IS NOT NULL) ` +
      `SELECT job_id FROM added WHERE (SELECT count(*) FROM woke) >= 0`,
    /**
     * How many of the pg-boss ids ($2, a JSON array) are in the queue's job table: the ids as one array, so that
     * the primary key finds each (a join with the JSON's rows was planned as a scan of the whole table).
     */
    countEngineJobs:
      `SELECT count(*)::int AS n FROM ${jobTable} WHERE name = $1 ` +
      `AND id = ANY (ARRAY(SELECT json_array_elements_text($2::json)::uuid))`,
    /** One compare-and-set ($2 job id, $3 version, $4 body, $5 keep until in ms). */
    replaceInTx: `UPDATE ${table} ${set} WHERE ${match} RETURNING version`,
    /** The same outside a transaction: a row another transaction holds is skipped, never waited for. */
    replaceSkipLocked:
      `WITH held AS (SELECT job_id FROM ${table} WHERE ${match} FOR UPDATE SKIP LOCKED) ` +
      `UPDATE ${table} t ${set} FROM held WHERE t.queue = $1 AND t.job_id = held.job_id RETURNING t.version`,
    /**
     * Many compare-and-sets at once ($2 job ids, $3 versions, $4 the records as one JSON array, $5 keep until in
     * ms; each skipped when another transaction holds its row).
     */
    replaceMany: replaceMany(false),
    /**
     * The same where some records are final ($6 to $8): each ends its pg-boss job (`engine_id`) in the same
     * statement. Apart, because planning pg-boss's partitioned job table doubles the statement's planning time
     * (0.17 against 0.32 ms measured), which a batch of claims, never final, need not pay.
     */
    replaceManyEnding: replaceMany(true),
    /**
     * A waiting job's start moved ($2 pg-boss id, $3 ms), and the workers woken at commit for its new time ($4 the
     * channel, $5 "now" as in `insertMany`) in the same statement. The NOTIFY is in FROM, so that the answer is a
     * plain integer for every client (a void column puzzles some ORMs); a data-modifying CTE always runs.
     */
    moveStart:
      `WITH moved AS (UPDATE ${jobTable} SET start_after = to_timestamp($3::float8 / 1000) ` +
      `WHERE name = $1 AND id = $2 AND state < 'active' RETURNING id) ` +
      `SELECT 1 AS woke FROM pg_notify($4, ${wakePayload('$3::float8', '$5::float8')})`,
    /**
     * A waiting job's pg-boss row cancelled ($2 its pg-boss id). pg-boss's own `cancel` also cancels an active job
     * and takes its ids as an array parameter, which not every `tx` kind passes as PostgreSQL reads it (a Prisma
     * client's raw query takes an array as JSON): this one takes one id and only a job not taken yet.
     */
    cancelWaiting:
      `UPDATE ${jobTable} SET state = 'cancelled', completed_on = now() ` +
      `WHERE name = $1 AND id = $2::uuid AND state < 'active'`,
    /** A taken job given back to start at $3 ms, without pg-boss counting an attempt. */
    putBack:
      `UPDATE ${jobTable} SET state = 'created', started_on = NULL, start_after = to_timestamp($3 / 1000.0) ` +
      `WHERE name = $1 AND id = $2 AND state = 'active'`,
    /** Taken jobs ended, each with its own output ($2 ids, $3 outputs). */
    finish: (state: 'completed' | 'failed') =>
      `UPDATE ${jobTable} j SET state = '${state}', completed_on = now(), output = d.output ` +
      `FROM unnest($2::uuid[], $3::jsonb[]) AS d(id, output) WHERE j.name = $1 AND j.id = d.id AND j.state = 'active'`,
  };
}

/** The statements of one schema, as `outboxSql` makes them. */
export type OutboxSql = ReturnType<typeof outboxSql>;

/** A stored row (`version`, `body`) as the job layer holds it. */
export function heldOf(row: Record<string, unknown> | undefined): HeldJob | null {
  if (!row) return null;
  return { record: JSON.parse(String(row.body)) as EmailJobRecord, token: String(row.version) };
}

/**
 * The end of the pg-boss job that goes with writing `next` over a taken job's record (`prev`, active): completed
 * with the message's id for `sent`, failed with the error (its name and message, as the worker's verdict carries it)
 * for `failed`; null otherwise (a claim, a retry, a pause, a cancel: pg-boss's job stays as it is).
 */
export function engineEndOf(
  prev: EmailJobRecord,
  next: EmailJobRecord,
): { state: 'completed' | 'failed'; output: unknown } | null {
  if (next.state === 'sent' && prev.state === 'active')
    return { state: 'completed', output: sentOutputOf(next.record) };
  if (next.state === 'failed' && (prev.state === 'active' || prev.state === 'waiting'))
    return { state: 'failed', output: failedOutputOf(next.error, next.jobId) };
  return null;
}

/**
 * What a sent job's pg-boss row keeps as its output: the message's id. The record itself is the job's record
 * (`status`), never copied into pg-boss's row (a second JSON document PostgreSQL would parse for every email).
 */
export function sentOutputOf(record: unknown): { messageId: unknown } {
  return { messageId: (record as { id?: unknown } | null | undefined)?.id ?? null };
}

/** What a failed job's pg-boss row keeps as its output: the error's name and message. */
export function failedOutputOf(
  error: { message?: string; name?: string } | undefined,
  jobId: string,
): { message: string; name: string } {
  return { message: error?.message ?? `Email job ${jobId} failed`, name: error?.name ?? 'EmailError' };
}

/** pg-boss's id of a job's record: a UUID from the job id and the record's birth, the same in every process. */
export function engineIdOf(queueName: string, record: Pick<EmailJobRecord, 'jobId' | 'createdAt'>): string {
  const h = createHash('sha256')
    .update(JSON.stringify([queueName, record.jobId, record.createdAt]))
    .digest('hex');
  const variant = ((parseInt(h[16] as string, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
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

import { createHash } from 'node:crypto';

/**
 * The payload of the NOTIFY that wakes the workers for a job due at `due` (ms): empty when it is due by `now`
 * (ms, the writer's clock), else its due time in whole ms (the worker then looks at that time).
 */
function wakePayload(due: string, now: string): string {
  return `CASE WHEN ${due} > ${now} THEN ceil(${due})::bigint::text ELSE '' END`;
}

/** The advisory lock of each job id of a write ($n: a JSON array of `<queue> <job id>`), taken in that order. */
const LOCK_JOB_IDS = (param: string) =>
  `(SELECT count(pg_advisory_xact_lock(hashtextextended(k, 0))) FROM ` +
  `(SELECT k FROM json_array_elements_text(${param}::json) AS k ORDER BY k) s)`;

/** The order pg-boss's fetch takes waiting jobs in (`ORDER BY priority DESC, created_on, id`), as index columns. */
export const FETCH_ORDER = 'name, priority DESC, created_on';

/** What a pg-boss install has beside its job table, read at boot (see `OutboxSchema` in the backend). */
export interface OutboxTables {
  /** pg-boss 10's `archive` (finished jobs move there): a job is read there too once it is not in `job`. */
  archive: boolean;
  /** pg-boss 11's `deletion_seconds`, a job's own retention once it ended: set by how it ended. */
  deletionSeconds: boolean;
}

/**
 * The statements of the outbox's engine on one schema. Each job's record is its pg-boss job (`data` the record as
 * written, `state`, `output` and pg-boss's counts beside it), so the statements here are the few pg-boss has no
 * call for: read a job as `status` needs it, change a waiting job (a cancel, a reschedule) if no worker took it,
 * write a batch of outcomes with each job's own output, and the fetch-order index. `$1` is always the queue.
 */
export function outboxSql(schema: string, tables: OutboxTables) {
  const jobTable = `"${schema}".job`;
  const jobState = `"${schema}".job_state`;
  const fetchOrder = FETCH_ORDER;
  const columns =
    `state::text AS state, data, output, retry_count, started_on IS NOT NULL AS started, ` +
    `(extract(epoch FROM start_after) * 1000)::float8 AS due_ms, (extract(epoch FROM completed_on) * 1000)::float8 AS ended_ms`;
  return {
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
    /**
     * One job ($2 its pg-boss id) as `status` reads it, never locked, with its row version (`xmin`) as the token a
     * change compares. On pg-boss 10 a job its maintenance archived is read from `archive` (final: no token).
     */
    read:
      `SELECT ${columns}, xmin::text AS token FROM ${jobTable} WHERE name = $1 AND id = $2::uuid` +
      (tables.archive
        ? ` UNION ALL (SELECT ${columns}, '' AS token FROM "${schema}".archive ` +
          `WHERE name = $1 AND id = $2::uuid AND NOT EXISTS (SELECT 1 FROM ${jobTable} WHERE name = $1 AND id = $2::uuid))`
        : ''),
    /**
     * The jobs of `ids` ($2, a JSON array of pg-boss ids) that pg-boss 10 archived: a job id written again while
     * its first job sits in the archive is that job (see `write`).
     */
    archived: tables.archive
      ? `SELECT id::text AS id FROM "${schema}".archive WHERE name = $1 ` +
        `AND id = ANY (ARRAY(SELECT json_array_elements_text($2::json)::uuid))`
      : undefined,
    /** Jobs written this instant and found in the archive taken out again ($2 a JSON array of pg-boss ids). */
    unwrite:
      `DELETE FROM ${jobTable} WHERE name = $1 AND id = ANY (ARRAY(SELECT json_array_elements_text($2::json)::uuid)) ` +
      `AND state = 'created'`,
    /**
     * A waiting job changed if no worker took it and nothing changed it since it was read ($3 its `xmin`): $4 its
     * data, $5 `cancel` (pg-boss's state `cancelled`) or `move` (its start at $6 ms, and the workers woken at commit
     * for that time: $8 the channel, $9 "now"); $7 how long a waiting job is kept past its start (ms). One
     * statement, which locks only the row it changes (in the app's transaction, until it ends).
     */
    replace:
      `WITH changed AS (UPDATE ${jobTable} SET data = $4::jsonb, ` +
      `state = CASE WHEN $5 = 'cancel' THEN 'cancelled'::${jobState} ELSE state END, ` +
      `completed_on = CASE WHEN $5 = 'cancel' THEN now() ELSE completed_on END, ` +
      `start_after = CASE WHEN $5 = 'cancel' THEN start_after ELSE to_timestamp($6::float8 / 1000) END, ` +
      `keep_until = GREATEST(keep_until, to_timestamp($6::float8 / 1000) + $7::float8 * interval '1 millisecond')` +
      (tables.deletionSeconds ? `, deletion_seconds = ceil($7::float8 / 1000)::int` : '') +
      ` WHERE name = $1 AND id = $2::uuid AND xmin = $3::xid AND state < 'active' RETURNING 1) ` +
      `SELECT count(*)::int AS changed FROM changed LEFT JOIN LATERAL ` +
      `(SELECT pg_notify($8, ${wakePayload('$6::float8', '$9::float8')}) WHERE $5 = 'move') w ON true`,
    /**
     * The outcomes of taken jobs, each with its own, in one statement: $2 pg-boss ids, $3 kinds (`sent`, `failed`,
     * `cancelled`; `later`: given back to start at $4 ms, not counted as taken; `cut`: given back, counted by
     * pg-boss's next fetch as a take that was cut off), $5 and $6 JSON arrays of outputs and data (null: kept as
     * they are), $7 how long a waiting job is kept past its start (ms), $8 how long a sent job is kept (ms).
     * JSON arrays, so that the client writes no array literal of the bodies (pg escapes every quote in one).
     */
    outcomes:
      `WITH d AS (SELECT u.id, u.kind, u.start_ms, o.value AS output, r.value AS data ` +
      `FROM unnest($2::uuid[], $3::text[], $4::float8[]) WITH ORDINALITY AS u(id, kind, start_ms, ord) ` +
      `JOIN json_array_elements($5::json) WITH ORDINALITY AS o(value, ord) USING (ord) ` +
      `JOIN json_array_elements($6::json) WITH ORDINALITY AS r(value, ord) USING (ord)), ` +
      // each job found by its primary key (a LATERAL look-up, then the row by its ctid), whatever the planner guesses
      // of the table: a plain join of the batch was planned as a read of every job of a queue never analyzed
      `held AS (SELECT d.*, l.row_id FROM d CROSS JOIN LATERAL (SELECT t.ctid AS row_id FROM ${jobTable} t ` +
      `WHERE t.name = $1 AND t.id = d.id AND t.state = 'active' LIMIT 1) l) ` +
      `UPDATE ${jobTable} j SET state = (CASE d.kind WHEN 'sent' THEN 'completed' WHEN 'failed' THEN 'failed' ` +
      `WHEN 'cancelled' THEN 'cancelled' ELSE 'created' END)::${jobState}, ` +
      `started_on = CASE WHEN d.kind = 'later' THEN NULL ELSE j.started_on END, ` +
      `start_after = CASE WHEN d.kind IN ('later', 'cut') THEN to_timestamp(d.start_ms / 1000) ELSE j.start_after END, ` +
      `completed_on = CASE WHEN d.kind IN ('later', 'cut') THEN NULL ELSE now() END, ` +
      `output = CASE WHEN json_typeof(d.output) = 'null' THEN j.output ELSE d.output::jsonb END, ` +
      `data = CASE WHEN json_typeof(d.data) = 'null' THEN j.data ELSE d.data::jsonb END, ` +
      `keep_until = CASE WHEN d.kind IN ('later', 'cut') THEN GREATEST(j.keep_until, ` +
      `to_timestamp(d.start_ms / 1000) + $7::float8 * interval '1 millisecond') ELSE j.keep_until END` +
      (tables.deletionSeconds
        ? `, deletion_seconds = CASE WHEN d.kind = 'sent' THEN ceil($8::float8 / 1000)::int ELSE j.deletion_seconds END`
        : '') +
      // (the queue's name keeps the row to its queue's partition, where a ctid is one row; $8 is named on every
      // pg-boss: PostgreSQL wants each parameter it is given in the text)
      ` FROM held d WHERE j.name = $1 AND j.ctid = d.row_id AND $8::float8 IS NOT NULL`,
    /** The locks of a write's job ids when they could not be part of pg-boss's insert ($1: see `LOCK_JOB_IDS`). */
    lockJobIds: `SELECT ${LOCK_JOB_IDS('$1')} AS locked`,
    /** A taken job's data written ($2 its pg-boss id, $3 the data), its state as it is. */
    keep: `UPDATE ${jobTable} SET data = $3::jsonb WHERE name = $1 AND id = $2::uuid AND state = 'active'`,
    /** Whether pg-boss 10's archive and pg-boss 11's `deletion_seconds` exist here ($1 the schema). */
    tables:
      `SELECT to_regclass(quote_ident($1) || '.archive') IS NOT NULL AS archive, EXISTS (SELECT 1 FROM ` +
      `information_schema.columns WHERE table_schema = $1 AND table_name = 'job' AND column_name = 'deletion_seconds') ` +
      `AS deletion_seconds`,
  };
}

/** The statements of one schema, as `outboxSql` makes them. */
export type OutboxSql = ReturnType<typeof outboxSql>;

/**
 * pg-boss's insert statement (`text`, with `params` values of pg-boss's) run so that it answers the ids it wrote
 * and wakes the workers at commit when it wrote any: $n+1 the channel, $n+2 the writer's clock in ms (the payload
 * is the earliest due time of the jobs it wrote, see `wakePayload`), $n+3 the job ids' locks (`LOCK_JOB_IDS`),
 * taken before pg-boss reads its jobs, so that two calls writing the same ids wait for each other instead of
 * each holding one the other needs (a deadlock). pg-boss 10 and 11 write their `INSERT ... ON CONFLICT DO
 * NOTHING` without `RETURNING` (12 with `RETURNING id`). `locking` false: pg-boss's text did not read its jobs
 * the way this knows (`json_to_recordset($1`), and the locks are taken by a statement of their own first.
 */
export function insertAndWake(text: string, params: number): { text: string; locking: boolean } {
  const body = text.trimEnd().replace(/;$/, '');
  const returning = /RETURNING\s+id\s*$/i.test(body)
    ? `${body}, start_after`
    : `${body} RETURNING id, start_after`;
  const reads = /json_to_recordset\(\$1\b/;
  const locking = reads.test(returning);
  const insert = locking
    ? returning.replace(
        reads,
        `json_to_recordset((SELECT $1::json WHERE ${LOCK_JOB_IDS(`$${params + 3}`)} >= 0)`,
      )
    : returning;
  const due = `(extract(epoch FROM m.due) * 1000)::float8`;
  return {
    locking,
    text:
      `WITH added AS (${insert}), woke AS (SELECT pg_notify($${params + 1}, ` +
      `${wakePayload(due, `$${params + 2}::float8`)}) FROM (SELECT min(start_after) AS due FROM added) m ` +
      `WHERE m.due IS NOT NULL) SELECT id::text AS id FROM added WHERE (SELECT count(*) FROM woke) >= 0`,
  };
}

/**
 * What a sent job's pg-boss row keeps as its output: the message record, which `status` and `waitFor` read.
 * Failed: the error's name and message (the record's own error is in its data).
 */
export function failedOutputOf(error: { message?: string; name?: string } | undefined, jobId: string) {
  return { message: error?.message ?? `Email job ${jobId} failed`, name: error?.name ?? 'EmailError' };
}

/** pg-boss's id of a job id: a UUID from the queue and the job id, the same in every process. */
export function engineIdOf(queueName: string, jobId: string): string {
  const h = createHash('sha256')
    .update(JSON.stringify([queueName, jobId]))
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

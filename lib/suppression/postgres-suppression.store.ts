import type { Client, ClientConfig, Pool } from 'pg';
import { EmailOptionsError } from '../errors/email-options.error.js';
import { loadPg, type PgModule } from '../peers/optional-peer.loader.js';
import { withTimeout } from '../time/clock.helpers.js';
import { SUPPRESSION_DEFAULTS } from './suppression.constants.js';
import type {
  StoreWatcher,
  StoredPage,
  SuppressionChange,
  SuppressionOp,
  SuppressionStore,
  SuppressionWrite,
} from './suppression-store.interface.js';

const FEATURE = 'EmailModule suppression.postgres';
/** How often a follower asks for versions it may have missed (a safety net: notifications bring them). */
const VERIFY_MS = 10_000;
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 10_000;
const ROWS = 5_000;

/** The reason PostgreSQL gave, without a connection string (it may carry a password). */
const reason = (err: unknown): string =>
  (err instanceof Error ? err.message : String(err)).replace(/postgres(?:ql)?:\/\/\S+/g, '<url>');

/** Splits a field into its list and its address key. */
function split(field: string): [string, string] {
  const nl = field.indexOf('\n');
  return [field.slice(0, nl), field.slice(nl + 1)];
}

type Row = { list: string; address_key: string; code: number; since: string; time: string };
const valueOf = (r: Row): string => `${r.code}|${r.since}|${r.time}`;

/**
 * The list in the app's PostgreSQL (for apps on the outbox), shared by every process: a table of entries,
 * a one-row version that every write bumps in its own transaction (so versions follow commit order with no
 * gap), a table of changes by version, and `NOTIFY` of each version at commit. A follower `LISTEN`s on a
 * connection of its own and reads the changes it has not applied; after that connection drops (it may
 * have missed notifications) it reads them all again from its last version.
 */
export class PostgresSuppressionStore implements SuppressionStore {
  readonly kind = 'postgres';
  private pg!: PgModule;
  private pool!: Pool;
  private ownPool = false;
  private listener?: Client;
  private listening = false;
  private closed = false;
  private timers = new Set<NodeJS.Timeout>();
  private readonly t: { entries: string; changes: string; state: string; claims: string };
  private readonly channel: string;

  constructor(
    private readonly connection: string | Pool,
    private readonly schema: string,
    private readonly timeoutMs: number,
  ) {
    const s = `"${schema}"`;
    this.t = {
      entries: `${s}.email_suppression`,
      changes: `${s}.email_suppression_change`,
      state: `${s}.email_suppression_state`,
      claims: `${s}.email_suppression_claim`,
    };
    this.channel = `${schema}.email_suppression`;
  }

  /** The pool is asked; the gate stops asking for a while after a read that failed. */
  get connected(): boolean {
    return !this.closed;
  }

  async open(): Promise<void> {
    this.pg = loadPg(FEATURE);
    if (typeof this.connection === 'string') {
      this.pool = new this.pg.Pool({
        connectionString: this.connection,
        max: 4,
        connectionTimeoutMillis: this.timeoutMs,
      });
      this.pool.on('error', () => undefined);
      this.ownPool = true;
    } else this.pool = this.connection;
    try {
      await withTimeout(this.prepare(), Math.max(this.timeoutMs, 10_000), 'PostgreSQL');
    } catch (err) {
      if (this.ownPool) await this.pool.end().catch(() => undefined);
      throw new EmailOptionsError([
        `suppression.postgres: cannot prepare the list's tables (${reason(err)})`,
      ]);
    }
  }

  /** Creates the schema and the tables when missing, one process at a time. */
  private async prepare(): Promise<void> {
    const { entries, changes, state, claims } = this.t;
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`email_suppression:${this.schema}`]);
      await client.query(`CREATE SCHEMA IF NOT EXISTS "${this.schema}"`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${entries} (list text COLLATE "C" NOT NULL, address_key text COLLATE "C" NOT NULL, ` +
          `code smallint NOT NULL, since bigint NOT NULL, time bigint NOT NULL, learned_at bigint, PRIMARY KEY (list, address_key))`,
      );
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${changes} (version bigint NOT NULL, field text NOT NULL, value text NOT NULL)`,
      );
      await client.query(
        `CREATE INDEX IF NOT EXISTS email_suppression_change_version ON ${changes} (version)`,
      );
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${state} (id smallint PRIMARY KEY CHECK (id = 1), version bigint NOT NULL)`,
      );
      await client.query(`INSERT INTO ${state} VALUES (1, 0) ON CONFLICT DO NOTHING`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${claims} (name text PRIMARY KEY, until_ms bigint NOT NULL)`,
      );
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  /**
   * One statement, so one transaction: the version bumped (the row lock orders concurrent writers), the
   * entries upserted (a learned one only over nothing that refuses now and nothing as recent as its record),
   * the change recorded under the version (a marker row when nothing applied) and notified at commit.
   */
  async write(ops: readonly SuppressionOp[], now: number): Promise<SuppressionWrite> {
    const last = new Map<string, SuppressionOp>();
    for (const op of ops) last.set(op.field, op); // one row may change once per statement
    const batch = [...last.values()];
    const cols: [string[], string[], number[], number[], number[], Array<number | null>] = [
      [],
      [],
      [],
      [],
      [],
      [],
    ];
    for (const op of batch) {
      const [list, key] = split(op.field);
      cols[0].push(list);
      cols[1].push(key);
      cols[2].push(op.entry.code);
      cols[3].push(op.entry.since);
      cols[4].push(op.entry.time);
      cols[5].push(op.learnedAt ?? null);
    }
    const { entries, changes, state } = this.t;
    const { rows } = await this.pool.query<{ version: string; applied: string[] | null }>(
      `WITH v AS (UPDATE ${state} SET version = version + 1 WHERE id = 1 RETURNING version),
       up AS (
         INSERT INTO ${entries} AS e (list, address_key, code, since, time, learned_at)
         SELECT * FROM unnest($1::text[], $2::text[], $3::smallint[], $4::bigint[], $5::bigint[], $6::bigint[])
         ON CONFLICT (list, address_key) DO UPDATE
           SET code = EXCLUDED.code, since = EXCLUDED.since, time = EXCLUDED.time, learned_at = EXCLUDED.learned_at
           WHERE EXCLUDED.learned_at IS NULL
              OR NOT ((e.code > 0 AND (e.time = 0 OR e.time > $7)) OR e.time >= EXCLUDED.learned_at)
         RETURNING list, address_key, code, since, time),
       logged AS (
         INSERT INTO ${changes} (version, field, value)
         SELECT v.version, up.list || E'\\n' || up.address_key, up.code || '|' || up.since || '|' || up.time FROM up, v
         UNION ALL SELECT v.version, '', '' FROM v WHERE NOT EXISTS (SELECT 1 FROM up))
       SELECT v.version, pg_notify($8, v.version::text),
              (SELECT array_agg(up.list || E'\\n' || up.address_key) FROM up) AS applied
       FROM v`,
      [...cols, now, this.channel],
    );
    const version = Number(rows[0].version);
    const done = new Set(rows[0].applied ?? []);
    if (version % 500 === 0) void this.trim(version);
    return { version, applied: ops.map((op) => done.has(op.field) && last.get(op.field) === op) };
  }

  private async trim(version: number): Promise<void> {
    await this.pool
      .query(`DELETE FROM ${this.t.changes} WHERE version < $1`, [version - SUPPRESSION_DEFAULTS.keepChanges])
      .catch(() => undefined);
  }

  async read(fields: readonly string[]): Promise<Array<string | null>> {
    if (fields.length === 0) return [];
    const pairs = fields.map(split);
    const { rows } = await this.pool.query<Row>(
      `SELECT list, address_key, code, since, time FROM ${this.t.entries}
       WHERE (list, address_key) IN (SELECT * FROM unnest($1::text[], $2::text[]))`,
      [pairs.map((p) => p[0]), pairs.map((p) => p[1])],
    );
    const found = new Map(rows.map((r) => [`${r.list}\n${r.address_key}`, valueOf(r)]));
    return fields.map((f) => found.get(f) ?? null);
  }

  async page(scope: string, after: string | undefined, limit: number): Promise<StoredPage> {
    const { rows } = await this.pool.query<Row>(
      `SELECT list, address_key, code, since, time FROM ${this.t.entries}
       WHERE list = $1 AND address_key > $2 AND code > 0 ORDER BY address_key LIMIT $3`,
      [scope, after ?? '', limit + 1],
    );
    const taken = rows.slice(0, limit);
    return {
      fields: taken.map((r) => `${r.list}\n${r.address_key}`),
      values: taken.map(valueOf),
      more: rows.length > limit,
    };
  }

  async snapshot(each: (field: string, value: string) => void): Promise<number> {
    const { rows: head } = await this.pool.query<{ version: string }>(`SELECT version FROM ${this.t.state}`);
    let after: [string, string] = ['', ''];
    for (;;) {
      const { rows } = await this.pool.query<Row>(
        `SELECT list, address_key, code, since, time FROM ${this.t.entries}
         WHERE (list, address_key) > ($1, $2) ORDER BY list, address_key LIMIT ${ROWS}`,
        after,
      );
      for (const r of rows) each(`${r.list}\n${r.address_key}`, valueOf(r));
      if (rows.length < ROWS) return Number(head[0]?.version ?? 0);
      after = [rows[rows.length - 1].list, rows[rows.length - 1].address_key];
    }
  }

  async changesSince(version: number): Promise<SuppressionChange[] | null> {
    const out: SuppressionChange[] = [];
    let from = version;
    for (;;) {
      const { rows } = await this.pool.query<{ version: string; field: string; value: string }>(
        `SELECT version, field, value FROM ${this.t.changes} WHERE version > $1 AND version <= $1 + ${ROWS} ORDER BY version`,
        [from],
      );
      if (rows.length === 0) {
        const { rows: head } = await this.pool.query<{ version: string }>(
          `SELECT version FROM ${this.t.state}`,
        );
        return Number(head[0]?.version ?? 0) > from ? null : out;
      }
      for (const r of rows) {
        const v = Number(r.version);
        let change = out[out.length - 1];
        if (change === undefined || change.version !== v) {
          if (v !== from + 1) return null; // a version is gone from the table: read everything again
          change = { version: v, ops: [] };
          out.push(change);
          from = v;
        }
        if (r.field !== '')
          (change.ops as Array<{ field: string; value: string }>).push({ field: r.field, value: r.value });
      }
    }
  }

  watch(watcher: StoreWatcher): Promise<boolean> {
    const verify = setInterval(() => this.listening && watcher.behind(), VERIFY_MS);
    verify.unref?.();
    this.timers.add(verify);
    return new Promise((resolve) => void this.listen(watcher, RETRY_FIRST_MS, resolve));
  }

  /**
   * The `LISTEN` connection, opened again with backoff when it drops. `first` hears whether the first try
   * worked; every later success tells the watcher (`back`), since notifications were lost meanwhile.
   */
  private async listen(watcher: StoreWatcher, retryMs: number, first?: (ok: boolean) => void): Promise<void> {
    if (this.closed) return;
    const client = new this.pg.Client(this.clientConfig());
    this.listener = client;
    let dropped = false;
    const drop = (why: string) => {
      if (dropped || this.closed) return;
      dropped = true;
      first?.(false);
      if (this.listening) watcher.lost(`its LISTEN connection dropped (${reason(why)})`);
      this.listening = false;
      void client.end().catch(() => undefined);
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        void this.listen(watcher, Math.min(retryMs * 2, RETRY_MAX_MS));
      }, retryMs);
      timer.unref?.();
      this.timers.add(timer);
    };
    client.on('error', (err: Error) => drop(err.message));
    client.on('end', () => drop('ended'));
    client.on('notification', (msg: { channel: string }) => {
      if (msg.channel === this.channel) watcher.behind();
    });
    try {
      await withTimeout(client.connect(), this.timeoutMs, 'PostgreSQL');
      await withTimeout(client.query(`LISTEN "${this.channel}"`), this.timeoutMs, 'PostgreSQL');
    } catch (err) {
      return drop(err instanceof Error ? err.message : String(err));
    }
    if (this.closed) return void client.end().catch(() => undefined);
    this.listening = true;
    if (first) first(true);
    else watcher.back();
  }

  /** The settings of the listener: the connection string, or those of the app's pool. */
  private clientConfig(): ClientConfig {
    if (typeof this.connection === 'string')
      return { connectionString: this.connection, keepAlive: true, connectionTimeoutMillis: this.timeoutMs };
    const options = (this.connection as unknown as { options?: ClientConfig }).options ?? {};
    return { ...options, keepAlive: true };
  }

  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  async claim(name: string, ms: number): Promise<boolean> {
    const now = Date.now();
    const { rows } = await this.pool.query(
      `INSERT INTO ${this.t.claims} AS c VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET until_ms = EXCLUDED.until_ms
       WHERE c.until_ms <= $3 RETURNING 1`,
      [name, now + ms, now],
    );
    return rows.length === 1;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.listening = false;
    await this.listener?.end().catch(() => undefined);
    if (this.ownPool) await this.pool.end().catch(() => undefined);
  }
}

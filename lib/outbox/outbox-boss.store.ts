import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type PgBoss from 'pg-boss';
import type { Pool, PoolClient } from 'pg';
import { EmailOutboxUnavailableError } from '../errors/email-outbox.error.js';
import { loadPg, loadPgBoss, pgBossInsertForm } from '../peers/optional-peer.loader.js';
import { raceDeadline, settledBy } from '../time/clock.helpers.js';
import { EmailOutboxResolvedOptions, type ResolvedEmailOutboxOptions } from './email-outbox.options.js';
import { outboxSql, type OutboxSql, type OutboxTables } from './outbox-sql.helpers.js';
import { describePgFailure } from './outbox-failure.helpers.js';
import { setupCommandFor, setupHintFor } from './outbox-setup.helpers.js';
import { OutboxStatements } from './outbox-statement.store.js';
import { holdPoolClient } from './outbox-tx.helpers.js';

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
 * The outbox's pg-boss, a provider of its own, made with the module: its pool (the outbox's own from a connection
 * string, or the app's), the pg-boss instance on it (every statement of pg-boss's own runs through `statements`,
 * parsed once per connection), and what that pg-boss install has (`sql`). At boot it connects, starts pg-boss
 * (which creates or migrates its tables in `schema`), creates the queue and the index in pg-boss's fetch order;
 * pg-boss's retention is set from `keepSentForMs` and `keepFailedForMs` (the jobs are the records). It stops
 * pg-boss and ends its own pool when the app closes, within `closeTimeoutMs` whatever PostgreSQL does.
 */
@Injectable()
export class OutboxBoss implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('EmailOutbox');
  readonly pool: Pool;
  readonly boss: PgBoss;
  /** The statements of this schema, as its pg-boss install has them (read at boot). */
  sql: OutboxSql;
  /** pg-boss's and the outbox's statements on `pool` (named where the pool is the outbox's own). */
  readonly statements: OutboxStatements;
  /** How this pg-boss's `insert` takes its jobs (`pgBossInsertForm`). */
  readonly insertForm: 'jobs' | 'name';
  /** Where the connection goes, for errors (never the password). */
  readonly target: string;
  private readonly ownPool: boolean;
  /** The queue's own pg-boss table (read at boot). */
  private jobTableName?: string;
  private closeDeadline?: number;
  private poolEnded = false;

  constructor(@Inject(EmailOutboxResolvedOptions) private readonly options: ResolvedEmailOutboxOptions) {
    const o = options;
    const PgBossCtor = loadPgBoss();
    this.target = describeTarget(o.connection);
    this.ownPool = typeof o.connection === 'string';
    if (typeof o.connection === 'string') {
      this.pool = new (loadPg().Pool)({
        connectionString: o.connection,
        max: o.poolSize,
        connectionTimeoutMillis: 5000,
      });
      this.pool.on('error', () => undefined); // an idle client's connection lost: the next query says so
    } else this.pool = o.connection;
    this.statements = new OutboxStatements(this.pool, o.namedStatements);
    this.sql = outboxSql(o.schema, { archive: false, deletionSeconds: false });
    this.insertForm = pgBossInsertForm(PgBossCtor);
    const keep = (ms: number) => Math.max(1, Math.ceil(ms / 1000));
    this.boss = new PgBossCtor({
      // pg-boss's single statements (its fetch, insert, maintenance) are parsed once per connection; its
      // migrations and locked blocks (several commands) run as they are
      db: {
        executeSql: (text: string, values?: unknown[]) =>
          /;\s*\S/.test(text) ? this.pool.query(text, values) : this.statements.query(text, values ?? []),
      },
      schema: o.schema,
      maintenanceIntervalSeconds: Math.ceil(o.maintenanceIntervalMs / 1000),
      migrate: o.migrate,
      // The jobs are the records: pg-boss 10 archives them after these, and deletes an archived one (read there
      // still) after the longer of the two; pg-boss 11 keeps each job its own time (set by the outbox's writes).
      archiveCompletedAfterSeconds: keep(o.keepSentForMs),
      archiveFailedAfterSeconds: keep(o.keepFailedForMs),
      deleteAfterSeconds: keep(Math.max(o.keepSentForMs, o.keepFailedForMs)),
      ...o.bossOptions,
    } as unknown as PgBoss.ConstructorOptions);
    this.boss.on('error', (err: Error) => this.logger.debug(`pg-boss: ${err.message}`));
  }

  /** Nest lifecycle hook (connects, starts pg-boss, creates the queue and its index): called by Nest, not by you. */
  async onModuleInit(): Promise<void> {
    try {
      await this.pool.query('SELECT 1');
    } catch (err) {
      await this.endOwnPool();
      throw new EmailOutboxUnavailableError(
        `${this.target} did not answer at boot: ${describePgFailure(err)}`,
        err,
      );
    }
    try {
      await this.boss.start();
      await this.ensureQueue();
      const { rows } = await this.pool.query(this.sql.tables, [this.options.schema]);
      const tables: OutboxTables = {
        archive: rows[0]?.archive === true,
        deletionSeconds: rows[0]?.deletion_seconds === true,
      };
      this.sql = outboxSql(this.options.schema, tables);
      const warning = await this.indexFetchOrder();
      if (warning !== undefined) this.logger.warn(warning);
    } catch (err) {
      await settledBy(this.boss.stop({ graceful: false, close: false, wait: true }), Date.now() + 2000);
      const hint = setupHintFor(err, this.pool, this.options).catch(() => '');
      const setup = await raceDeadline(hint, 2000, () => '');
      await this.endOwnPool();
      throw new EmailOutboxUnavailableError(
        `pg-boss could not start on ${this.target}: ${describePgFailure(err)}${setup}`,
        err,
      );
    }
  }

  /** PostgreSQL answers (used by the health indicator). */
  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  /** Jobs not yet sent (waiting, delayed or retrying), for the health indicator. */
  async backlog(): Promise<number> {
    const size = (this.boss as unknown as { getQueueSize?: (n: string) => Promise<number> }).getQueueSize;
    return typeof size === 'function' ? Number(await size.call(this.boss, this.options.queueName)) : 0;
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

  /** Nest lifecycle hook: stops pg-boss and ends the outbox's own pool, within `closeTimeoutMs` whatever PostgreSQL does. */
  async onApplicationShutdown(): Promise<void> {
    const deadline = (this.closeDeadline ??= Date.now() + this.options.closeTimeoutMs);
    await settledBy(this.boss.stop({ graceful: false, close: false, wait: true }), deadline);
    await settledBy(this.endOwnPool(), deadline);
  }

  /**
   * pg-boss 10 needs its queue created before a send; creating it twice (two processes booting) is harmless.
   * With `migrate: false` it must exist already (the DBA's SQL makes it).
   */
  private async ensureQueue(): Promise<void> {
    const name = this.options.queueName;
    if (await this.boss.getQueue(name)) return;
    if (!this.options.migrate)
      throw new Error(`the queue ${name} does not exist in schema ${this.options.schema}`);
    try {
      await this.boss.createQueue(name, { name, policy: 'standard' } as never);
    } catch (err) {
      if (!(await this.boss.getQueue(name))) throw err;
    }
  }

  /**
   * pg-boss 10 and 11 fetch with `ORDER BY priority DESC, created_on, id` and have no index in that order: each
   * fetch sorts every waiting job of the queue (16 ms per fetch of 10 behind 30,000 waiting jobs, measured;
   * 0.3 ms with this index), so a backlog slows the worker that should drain it. pg-boss 12 has such an index
   * (`job_i11`), and then nothing is made. Made once, on the queue's own table, only when missing (a catalog
   * read: no lock at later boots); `CREATE INDEX` holds off writes to that table while it builds, so it gives
   * up after 2 s of waiting for the table (a long transaction that wrote a job) rather than hold up the boot
   * and the app's writes: the next boot tries again.
   * @returns a warning for the log when the index could not be made at this boot
   */
  private async indexFetchOrder(): Promise<string | undefined> {
    const { schema, queueName } = this.options;
    const { rows } = await this.pool.query(this.sql.fetchOrderIndexed, [queueName, schema]);
    const found = rows[0] as { table_name: string; indexed: boolean } | undefined;
    this.jobTableName = found?.table_name;
    if (found === undefined || found.indexed) return undefined;
    if (!this.options.migrate)
      return (
        `no index in pg-boss's fetch order on ${schema}.${found.table_name} (migrate: false): a backlog is fetched ` +
        `more slowly until it is made (the SQL of \`${await setupCommandFor(this.pool, this.options)}\` makes it)`
      );
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
        `no index in pg-boss's fetch order on ${schema}.${found.table_name} yet ` +
        `(${(err as { code?: string }).code ?? (err as Error).message}): a backlog is fetched more slowly ` +
        `until a later boot makes it`
      );
    } finally {
      release();
    }
  }

  private async endOwnPool(): Promise<void> {
    if (!this.ownPool || this.poolEnded) return;
    this.poolEnded = true;
    await this.pool.end().catch(() => undefined);
  }
}

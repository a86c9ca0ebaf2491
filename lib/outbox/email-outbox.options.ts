import type { Pool } from 'pg';
import { EmailOptionsError } from '../errors/email-options.error.js';
import {
  countProblem,
  msProblem,
  resolveJobOptions,
  showOption,
  type EmailJobBackoff,
  type EmailJobOptions,
  type JobModuleAsyncOptions,
  type ResolvedEmailJobOptions,
} from '../jobs/email-job.options.js';

/**
 * Delays between attempts of an outboxed job (the job layer's backoff, the same as the queue's).
 * @publicApi
 */
export type EmailOutboxBackoff = EmailJobBackoff;

/** How to reach PostgreSQL: a connection string, or an existing `pg` Pool (never ended by the outbox). */
export type EmailOutboxConnection = string | Pool;

/**
 * What `connection` reaches: PostgreSQL itself (`'none'`), or a pooler such as PgBouncer in `'session'` mode (a
 * server connection per client connection: the same as none) or in `'transaction'` mode (a server connection per
 * transaction, shared by every client).
 */
export type EmailOutboxPooler = 'none' | 'session' | 'transaction';

/**
 * Options of `EmailOutboxModule.forRoot`: the job options both engines share (`EmailJobOptions`, the names a
 * `./queue` user knows) and the outbox's own. A `send` with `tx` is bounded by the app's transaction, not by
 * `commandTimeoutMs`.
 */
export interface EmailOutboxOptions extends EmailJobOptions {
  /** A PostgreSQL connection string (`postgres://user:pass@host:5432/db`) or an existing `pg` Pool: the app's own database. */
  connection: EmailOutboxConnection;
  /** The PostgreSQL schema pg-boss keeps its tables in (created and migrated at boot). @default 'pgboss' */
  schema?: string;
  /** The pg-boss queue name. @default 'email' */
  queueName?: string;
  /** How often each idle worker loop looks for jobs (at least 100; the loops take turns). @default 500 */
  pollingIntervalMs?: number;
  /**
   * How long one attempt may take before pg-boss takes the job back and tries again (pg-boss `expireInSeconds`,
   * whole seconds, at least 1000). A worker killed mid-send leaves its job for this long (plus up to
   * `maintenanceIntervalMs`). @default 120000
   */
  attemptTimeoutMs?: number;
  /** How often pg-boss's maintenance takes back jobs of dead workers and deletes old ones (at least 1000). @default 60000 */
  maintenanceIntervalMs?: number;
  /** Size of the outbox's own pool when `connection` is a string. @default concurrency + 4 */
  poolSize?: number;
  /**
   * What sits between `connection` and PostgreSQL. `'transaction'`: PgBouncer in transaction mode (or a hosted
   * pooler that works so): the outbox then names no statement and changes no session setting (a pooler hands the
   * next transaction another server connection), and its worker never `LISTEN`s through `connection` (a `LISTEN`
   * there is heard by whichever client gets that server connection next): it listens on `listenConnection`, or
   * polls every `pollingIntervalMs`. `'session'` (a server connection per client connection) works as `'none'`.
   * @default 'none'
   */
  pooler?: EmailOutboxPooler;
  /**
   * A connection string straight to PostgreSQL (past the pooler) for the worker's `LISTEN`: one connection per
   * worker process, so that a commit wakes the worker at once. Without it the worker listens on `connection`,
   * unless `pooler` is `'transaction'` (then it polls).
   */
  listenConnection?: string;
  /**
   * Send a job only once PostgreSQL's standbys have its commit: with asynchronous replication a failover loses the
   * commits its standby never received (the app's rows and their jobs together), and an email already sent for
   * one would be about rows that no longer exist. `true`: every standby streaming from the primary; a list: the
   * standbys of those `application_name`s (the ones a failover may promote; leave out a distant read replica whose
   * lag would delay every email); `false`: none. Reading a standby's progress needs `pg_read_all_stats` (or
   * superuser); without it the worker warns once and sends. With synchronous replication it costs one look per fetch.
   * @default true
   */
  waitForStandbys?: boolean | string[];
  /**
   * Whether the boot creates or migrates pg-boss's tables in `schema`, its queue and the outbox's fetch index.
   * `false` for a role that may create nothing: a DBA makes them once with the SQL `npx email-outbox-sql` prints
   * (`outboxSetupSql`), and the boot fails, naming that command, while the schema is missing or behind the
   * pg-boss installed.
   * @default true
   */
  migrate?: boolean;
  /** Other pg-boss constructor options, passed as they are (the outbox sets connection, schema and the ones above). */
  bossOptions?: Record<string, unknown>;
}

/** Builds `EmailOutboxOptions` in a class (`useClass` / `useExisting`). */
export interface EmailOutboxOptionsFactory {
  createEmailOutboxOptions(): EmailOutboxOptions | Promise<EmailOutboxOptions>;
}

/** Options of `EmailOutboxModule.forRootAsync` (`imports`, `inject`, `useFactory` | `useClass` | `useExisting`). */
export type EmailOutboxAsyncOptions = JobModuleAsyncOptions<EmailOutboxOptions, 'createEmailOutboxOptions'>;

/** Options with every default applied. */
export interface ResolvedEmailOutboxOptions extends ResolvedEmailJobOptions {
  readonly connection: EmailOutboxConnection;
  readonly schema: string;
  readonly queueName: string;
  readonly pollingIntervalMs: number;
  readonly attemptTimeoutMs: number;
  readonly maintenanceIntervalMs: number;
  readonly poolSize: number;
  readonly pooler: EmailOutboxPooler;
  /** Where the worker listens for commits (`listenConnection`, else `connection` unless pooled per transaction). */
  readonly listenTo: EmailOutboxConnection | undefined;
  /** Whether the outbox's own statements are named (its own pool, on a connection that keeps them). */
  readonly namedStatements: boolean;
  /** The standbys the worker waits for before a send: all, none, or those `application_name`s. */
  readonly waitForStandbys: 'all' | 'none' | readonly string[];
  readonly migrate: boolean;
  readonly bossOptions: Record<string, unknown>;
}

const POOLERS: readonly unknown[] = ['none', 'session', 'transaction'] satisfies EmailOutboxPooler[];

const isPool = (value: unknown): value is Pool =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as Pool).connect === 'function' &&
  typeof (value as Pool).query === 'function';

/**
 * The token under which the checked options are provided (a class, as Nest's own modules do; never exported).
 */
export abstract class EmailOutboxResolvedOptions {}

/**
 * Checks outbox options (the shared job options through `resolveJobOptions`, then the outbox's own) and
 * applies defaults.
 * @throws EmailOptionsError naming every problem at once.
 */
export function resolveEmailOutboxOptions(
  raw: EmailOutboxOptions | null | undefined,
): ResolvedEmailOutboxOptions {
  const o = (raw ?? {}) as Partial<EmailOutboxOptions>;
  const problems: string[] = [];
  const c = o.connection;
  if (typeof c === 'string') {
    if (!/^postgres(ql)?:\/\//.test(c))
      problems.push('connection must be a postgres:// or postgresql:// connection string, or a pg Pool');
  } else if (!isPool(c)) {
    problems.push(
      'connection is required: a PostgreSQL connection string (postgres://...) or an existing pg Pool',
    );
  }
  const job = resolveJobOptions(o, problems);
  const schema = o.schema ?? 'pgboss';
  if (typeof schema !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]{0,49}$/.test(schema))
    problems.push(
      `schema must be a PostgreSQL name: letters, digits and _, not starting with a digit (got ${showOption(schema)})`,
    );
  const queueName = o.queueName ?? 'email';
  if (typeof queueName !== 'string' || !/^[A-Za-z0-9_.\-/]{1,100}$/.test(queueName))
    problems.push(
      `queueName must be 1-100 letters, digits or _ . - / (pg-boss refuses others; got ${showOption(queueName)})`,
    );
  const poolSize = o.poolSize ?? job.concurrency + 4;
  const times: Array<[string, unknown, number]> = [
    ['pollingIntervalMs', o.pollingIntervalMs ?? 500, 100],
    ['attemptTimeoutMs', o.attemptTimeoutMs ?? 120_000, 1000],
    ['maintenanceIntervalMs', o.maintenanceIntervalMs ?? 60_000, 1000],
  ];
  for (const problem of [
    countProblem('poolSize', poolSize, 2),
    ...times.map(([name, value, min]) => msProblem(name, value, min)),
  ])
    if (problem !== undefined) problems.push(problem);
  const pooler = o.pooler ?? 'none';
  if (!POOLERS.includes(pooler))
    problems.push(`pooler must be 'none', 'session' or 'transaction' (got ${showOption(pooler)})`);
  const listen = o.listenConnection;
  if (listen !== undefined && (typeof listen !== 'string' || !/^postgres(ql)?:\/\//.test(listen)))
    problems.push(
      'listenConnection must be a postgres:// or postgresql:// connection string (straight to PostgreSQL)',
    );
  const standbys = o.waitForStandbys ?? true;
  if (
    typeof standbys !== 'boolean' &&
    !(Array.isArray(standbys) && standbys.every((n) => typeof n === 'string' && n !== ''))
  )
    problems.push(
      `waitForStandbys must be true, false or a list of standbys' application_name (got ${showOption(standbys)})`,
    );
  if (o.migrate !== undefined && typeof o.migrate !== 'boolean')
    problems.push(`migrate must be true or false (got ${showOption(o.migrate)})`);
  if (o.bossOptions !== undefined && (typeof o.bossOptions !== 'object' || o.bossOptions === null))
    problems.push('bossOptions must be an object of pg-boss constructor options');
  if (problems.length > 0) throw new EmailOptionsError(problems.map((p) => `EmailOutboxModule: ${p}`));
  const t = Object.fromEntries(times.map(([n, v]) => [n, v as number]));
  return {
    ...job,
    connection: c as EmailOutboxConnection,
    schema,
    queueName,
    pollingIntervalMs: t.pollingIntervalMs as number,
    attemptTimeoutMs: t.attemptTimeoutMs as number,
    maintenanceIntervalMs: t.maintenanceIntervalMs as number,
    poolSize,
    pooler,
    listenTo: listen ?? (pooler === 'transaction' ? undefined : (c as EmailOutboxConnection)),
    namedStatements: typeof c === 'string' && pooler !== 'transaction',
    migrate: o.migrate ?? true,
    waitForStandbys: standbys === true ? 'all' : standbys === false ? 'none' : [...(standbys as string[])],
    bossOptions: o.bossOptions ?? {},
  };
}

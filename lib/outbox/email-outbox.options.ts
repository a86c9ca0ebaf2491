import type { ConfigurableModuleAsyncOptions } from '@nestjs/common';
import type { Pool } from 'pg';
import { EmailOptionsError } from '../errors/email-options.error.js';

/** Exponential backoff with full jitter between attempts of a job (the job layer's own, on every pg-boss version). */
export interface EmailOutboxBackoff {
  /** The ceiling of the delay before the second attempt, doubled for each further one. @default 1000 */
  delayMs?: number;
  /** Longest delay between two attempts. @default 60000 */
  maxDelayMs?: number;
}

/** How to reach PostgreSQL: a connection string, or an existing `pg` Pool (never ended by the outbox). */
export type EmailOutboxConnection = string | Pool;

/** Options of `EmailOutboxModule.forRoot`: the names a `./queue` user knows, where they mean the same. */
export interface EmailOutboxOptions {
  /** A PostgreSQL connection string (`postgres://user:pass@host:5432/db`) or an existing `pg` Pool: the app's own database. */
  connection: EmailOutboxConnection;
  /** The `name` of the `EmailModule` instance whose `EmailService` sends the jobs. @default the default instance */
  emailService?: string;
  /** The PostgreSQL schema pg-boss keeps its tables in (created and migrated at boot). @default 'pgboss' */
  schema?: string;
  /** The pg-boss queue name. @default 'email' */
  queueName?: string;
  /** True: this process runs a worker. False: it only enqueues. @default true */
  worker?: boolean;
  /** Jobs one worker process sends at once. @default 10 */
  concurrency?: number;
  /** Attempts per job, the first included. @default 8 */
  attempts?: number;
  /** Delays between attempts. */
  backoff?: EmailOutboxBackoff;
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
  /** How long sent jobs are kept, so that `status` and `waitFor` still answer. @default 7 days */
  keepSentForMs?: number;
  /** How long failed jobs are kept (pg-boss 10 has one age for every finished job: the larger of the two applies). @default 30 days */
  keepFailedForMs?: number;
  /** The longest `app.close()` takes, whatever PostgreSQL does; jobs in flight get this long to finish. @default 30000 */
  closeTimeoutMs?: number;
  /**
   * The longest `send` (without `tx`), `status`, `cancel` and `reschedule` take when PostgreSQL does not
   * answer; past it they fail with `EmailOutboxUnavailableError`. @default 10000
   */
  commandTimeoutMs?: number;
  /** Size of the outbox's own pool when `connection` is a string. @default concurrency + 4 */
  poolSize?: number;
  /** Other pg-boss constructor options, passed as they are (the outbox sets connection, schema and the ones above). */
  bossOptions?: Record<string, unknown>;
}

/** Builds `EmailOutboxOptions` in a class (`useClass` / `useExisting`). */
export interface EmailOutboxOptionsFactory {
  createEmailOutboxOptions(): EmailOutboxOptions | Promise<EmailOutboxOptions>;
}

/** Options of `EmailOutboxModule.forRootAsync` (`imports`, `inject`, `useFactory` | `useClass` | `useExisting`). */
export type EmailOutboxAsyncOptions = ConfigurableModuleAsyncOptions<
  EmailOutboxOptions,
  'createEmailOutboxOptions'
> & { isGlobal?: boolean };

/** Options with every default applied. */
export interface ResolvedEmailOutboxOptions {
  readonly connection: EmailOutboxConnection;
  readonly emailService?: string;
  readonly schema: string;
  readonly queueName: string;
  readonly worker: boolean;
  readonly concurrency: number;
  readonly attempts: number;
  readonly backoff: Required<EmailOutboxBackoff>;
  readonly pollingIntervalMs: number;
  readonly attemptTimeoutMs: number;
  readonly maintenanceIntervalMs: number;
  readonly keepSentForMs: number;
  readonly keepFailedForMs: number;
  readonly closeTimeoutMs: number;
  readonly commandTimeoutMs: number;
  readonly poolSize: number;
  readonly bossOptions: Record<string, unknown>;
}

const DAY_MS = 86_400_000;
const show = (value: unknown): string => (typeof value === 'string' ? JSON.stringify(value) : String(value));
const positiveInt = (value: unknown): boolean => Number.isSafeInteger(value) && (value as number) >= 1;
const atLeast = (value: unknown, min: number): boolean =>
  typeof value === 'number' && Number.isFinite(value) && value >= min;
const isPool = (value: unknown): value is Pool =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as Pool).connect === 'function' &&
  typeof (value as Pool).query === 'function';

/**
 * Checks outbox options and applies defaults.
 * @throws EmailOptionsError naming every problem at once.
 */
/**
 * The token under which the checked options are provided (a class, as Nest's own modules do; never exported).
 */
export abstract class EmailOutboxResolvedOptions {}

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
  if (o.emailService !== undefined && (typeof o.emailService !== 'string' || o.emailService.trim() === ''))
    problems.push(`emailService must be the name of an EmailModule instance (got ${show(o.emailService)})`);
  const schema = o.schema ?? 'pgboss';
  if (typeof schema !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]{0,49}$/.test(schema))
    problems.push(
      `schema must be a PostgreSQL name: letters, digits and _, not starting with a digit (got ${show(schema)})`,
    );
  const queueName = o.queueName ?? 'email';
  if (typeof queueName !== 'string' || !/^[A-Za-z0-9_.\-/]{1,100}$/.test(queueName))
    problems.push(
      `queueName must be 1-100 letters, digits or _ . - / (pg-boss refuses others; got ${show(queueName)})`,
    );
  if (o.worker !== undefined && typeof o.worker !== 'boolean')
    problems.push(`worker must be true or false (got ${show(o.worker)})`);
  const ints = { concurrency: o.concurrency ?? 10, attempts: o.attempts ?? 8 };
  for (const [name, value] of Object.entries(ints)) {
    if (!positiveInt(value)) problems.push(`${name} must be an integer of at least 1 (got ${show(value)})`);
  }
  const poolSize = o.poolSize ?? ints.concurrency + 4;
  if (!positiveInt(poolSize) || (positiveInt(ints.concurrency) && poolSize < 2))
    problems.push(`poolSize must be an integer of at least 2 (got ${show(poolSize)})`);
  const backoff = { delayMs: o.backoff?.delayMs ?? 1000, maxDelayMs: o.backoff?.maxDelayMs ?? 60_000 };
  const times: Array<[string, unknown, number]> = [
    ['backoff.delayMs', backoff.delayMs, 0],
    ['backoff.maxDelayMs', backoff.maxDelayMs, 0],
    ['pollingIntervalMs', o.pollingIntervalMs ?? 500, 100],
    ['attemptTimeoutMs', o.attemptTimeoutMs ?? 120_000, 1000],
    ['maintenanceIntervalMs', o.maintenanceIntervalMs ?? 60_000, 1000],
    ['keepSentForMs', o.keepSentForMs ?? 7 * DAY_MS, 1000],
    ['keepFailedForMs', o.keepFailedForMs ?? 30 * DAY_MS, 1000],
    ['closeTimeoutMs', o.closeTimeoutMs ?? 30_000, 0],
    ['commandTimeoutMs', o.commandTimeoutMs ?? 10_000, 1],
  ];
  for (const [name, value, min] of times) {
    if (!atLeast(value, min))
      problems.push(`${name} must be a number of milliseconds >= ${min} (got ${show(value)})`);
  }
  if (o.bossOptions !== undefined && (typeof o.bossOptions !== 'object' || o.bossOptions === null))
    problems.push('bossOptions must be an object of pg-boss constructor options');
  if (problems.length > 0) throw new EmailOptionsError(problems.map((p) => `EmailOutboxModule: ${p}`));
  const t = Object.fromEntries(times.map(([n, v]) => [n, v as number]));
  return {
    connection: c as EmailOutboxConnection,
    ...(o.emailService !== undefined ? { emailService: o.emailService } : {}),
    schema,
    queueName,
    worker: o.worker ?? true,
    ...ints,
    backoff,
    pollingIntervalMs: t.pollingIntervalMs as number,
    attemptTimeoutMs: t.attemptTimeoutMs as number,
    maintenanceIntervalMs: t.maintenanceIntervalMs as number,
    keepSentForMs: t.keepSentForMs as number,
    keepFailedForMs: t.keepFailedForMs as number,
    closeTimeoutMs: t.closeTimeoutMs as number,
    commandTimeoutMs: t.commandTimeoutMs as number,
    poolSize,
    bossOptions: o.bossOptions ?? {},
  };
}

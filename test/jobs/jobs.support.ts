/**
 * The harness of the job-layer specs (issue 34): every spec that tests what `EmailQueue` and `EmailOutbox`
 * share runs `describe.each(ENGINES)` over both, through one `Engine` object per block. The contract is
 * test/jobs/API.md; `JobsApi` below is that contract as a type, and `engine.app()` assigns the real
 * `EmailQueue` / `EmailOutbox` to it without a cast, so that a drift between the two shows here in `tsc`.
 *
 * One store per spec file (a private Redis, or a private PostgreSQL, started by the block that needs it,
 * so a file that runs both engines runs them one after the other) and one sandbox per block, reset before
 * each test. Apps opened by a test are closed after it, and a frozen store is thawed, whatever the test did.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { EmailError, type EmailModuleOptions } from '../../lib/index.js';
import type { EmailInput } from '../../lib/interfaces/email-input.interface.js';
import type { EmailLog } from '../../lib/interfaces/email-records.interface.js';
import * as outboxEntry from '../../lib/outbox/index.js';
import * as queueEntry from '../../lib/queue/index.js';
import { EmailOutbox, EmailOutboxModule, type EmailOutboxOptions } from '../../lib/outbox/index.js';
import { EmailQueue, EmailQueueModule, type EmailQueueOptions } from '../../lib/queue/index.js';
import { EmailSandbox, type SandboxOptions } from '../../lib/testing/index.js';
import { emailApp } from '../support/email-app.js';
import { startPostgres, type TestPostgres } from '../support/postgres-server.mjs';
import { startRedis, type TestRedis } from '../support/redis-server.mjs';

export type EngineName = 'queue' | 'outbox';
export const ENGINES: readonly EngineName[] = ['queue', 'outbox'];

export type JobState = 'waiting' | 'delayed' | 'active' | 'sent' | 'failed' | 'cancelled';

/** `status(jobId)` as API.md describes it. */
export interface JobStatus {
  jobId: string;
  idempotencyKey: string;
  state: JobState;
  attempts: number;
  runAt?: Date;
  messageId?: number;
  record?: EmailLog;
  error?: { name: string; message: string; outcome?: string };
}

export type CancelAnswer = { cancelled: true } | { cancelled: false; state: JobState | null };
export type RescheduleAnswer = { rescheduled: true } | { rescheduled: false; state: JobState | null };

/** What both engines expose (API.md), without the engine-only options (`priority`, `tx`). */
export interface JobsApi {
  send(
    input: EmailInput,
    options?: { jobId?: string; delayMs?: number; account?: string },
  ): Promise<{ jobId: string; idempotencyKey: string }>;
  sendMany(
    items: Array<{ input: EmailInput; options?: { jobId?: string; delayMs?: number; account?: string } }>,
  ): Promise<Array<{ jobId: string; idempotencyKey: string }>>;
  status(jobId: string): Promise<JobStatus | null>;
  waitFor(jobId: string, options?: { timeoutMs?: number }): Promise<EmailLog>;
  cancel(jobId: string): Promise<CancelAnswer>;
  reschedule(jobId: string, when: { delayMs: number } | { at: Date }): Promise<RescheduleAnswer>;
  keyFor(jobId: string, options?: { account?: string }): string;
}

/** API.md: both modules' options gain `commandTimeoutMs` (the spreads below would not show its absence). */
export type CommandTimeoutOptions = [
  EmailQueueOptions['commandTimeoutMs'],
  EmailOutboxOptions['commandTimeoutMs'],
];

/** The options the specs set; each engine maps them to its own. */
export interface EngineAppOptions {
  /** Attempts per job, the first included. @default 3 */
  attempts?: number;
  /** @default 2 */
  concurrency?: number;
  /** false: this app only enqueues. @default true */
  worker?: boolean;
  /** API.md's new option of both modules. @default the module's default */
  commandTimeoutMs?: number;
  /** Outbox only (pg-boss's expiry of an attempt); the queue ignores it. */
  attemptTimeoutMs?: number;
  /** @default 5000 */
  closeTimeoutMs?: number;
  /**
   * The store namespace (the queue's `queueName`, the outbox's pg-boss `schema`): pass an earlier app's
   * `namespace` to open a second app (another process, as it were) on the same jobs. @default a fresh one
   */
  namespace?: string;
  /** EmailModule options beside the sandbox's (e.g. `accounts`, issue 35). */
  email?: Partial<EmailModuleOptions>;
}

export interface EngineApp {
  jobs: JobsApi;
  /** The queue name (queue) or the pg-boss schema (outbox) this app runs on. */
  namespace: string;
  /** The outbox itself, for what only it has (`tx`); undefined on the queue. */
  outbox?: EmailOutbox;
  /** The queue itself; undefined on the outbox. */
  queue?: EmailQueue;
  /** Closes the app (a second call is a no-op). */
  close(): Promise<void>;
}

type ErrorClass = abstract new (...args: never[]) => Error;

export interface Engine {
  readonly name: EngineName;
  /** The block's sandbox (reset before each test). */
  readonly sandbox: EmailSandbox;
  /** Opens an app: EmailModule on the sandbox plus the engine's module, fast settings. Closed after the test. */
  app(options?: EngineAppOptions): Promise<EngineApp>;
  /** SIGSTOP of the store (Redis; PostgreSQL's postmaster and backends): connections stay open, nothing answers. */
  freeze(): void;
  /** SIGCONT of the store. */
  thaw(): void;
  /** Takes the store down (its process ends: connections refused); its data stays for `up`. */
  down(): Promise<void>;
  /** Starts the store again on its data, after `down` (also after each test that left it down). */
  up(): Promise<void>;
  /**
   * Applies the engine's own retention to the finished jobs of `app`'s namespace, as it runs within
   * `keepSentForMs`: the queue, BullMQ's age-based removal with each job's own ages (which the queue sets from
   * `keepSentForMs` and `keepFailedForMs`, so that it removes none of these); the outbox, pg-boss 10's archive of
   * every finished job (as a pg-boss of the app's own on the same schema does after 12 hours). Throws when there is
   * nothing to apply it to, or the outbox's rows are still in `job` afterwards.
   */
  forget(app: EngineApp): Promise<void>;
  /**
   * Runs `work` in an app transaction (a pg client after BEGIN, COMMIT when it resolves, ROLLBACK when it
   * throws). Outbox only.
   */
  inTx<T>(work: (tx: pg.PoolClient) => Promise<T>): Promise<T>;
  /** The app's own pool on the outbox's database (the `orders` table exists). Outbox only. */
  readonly pool: pg.Pool;
  /**
   * Everything the store holds, as text: every Redis key and value (the queue), every row of every table
   * of the app's pg-boss schema (the outbox). For specs that look for what must never be stored.
   */
  dump(app: EngineApp): Promise<string>;
  /** `EmailQueueUnavailableError` or `EmailOutboxUnavailableError`. */
  readonly unavailableError: ErrorClass;
  /** `EmailJobConflictError` of the engine's entry point. */
  readonly conflictError: ErrorClass;
  /** `EmailJobCancelledError` of the engine's entry point. */
  readonly cancelledError: ErrorClass;
}

/** The sandbox every block uses: the sample template 1 plus template 7 below. */
export const SANDBOX_OPTIONS: SandboxOptions = {
  templates: {
    1: { subject: 'Welcome, {{name}}', text: 'Hello {{name}}' },
    7: { subject: 'Your order', text: 'Order {{order}} is on its way, {{name}}' },
  },
};

/** Inline mail that looks alike: same sender, recipients and subject; only the body tells them apart. */
export function lookAlike(text: string): EmailInput {
  return { from: 'shop@example.com', to: ['ada@example.com'], subject: 'Your order', text };
}

/** Template mail with the same sender and recipients as `lookAlike` (template 7: subject "Your order"). */
export function templated(order: string, name = 'Ada'): EmailInput {
  return {
    from: 'shop@example.com',
    to: ['ada@example.com'],
    templateId: 7,
    variables: { order, name },
  } as EmailInput;
}

export const fresh = (prefix: string): string => `${prefix}${randomUUID().replaceAll('-', '').slice(0, 12)}`;

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** What a promise did within `ms`: its value, its error, or 'still running' (a loose bound, not a timing assertion). */
export async function within<T>(
  promise: Promise<T>,
  ms: number,
): Promise<{ value: T } | { error: unknown } | 'still running'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'still running'>((r) => {
    timer = setTimeout(() => r('still running'), ms);
  });
  try {
    return await Promise.race([
      promise.then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits until `check` holds (polling every `every` ms), or fails after `timeoutMs`. */
export async function until(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
  every = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(every);
  }
}

/** POST /emails requests the sandbox received, with their Idempotency-Key and answer status. */
export function posts(sandbox: EmailSandbox): Array<{ key: string | undefined; status: number | null }> {
  return sandbox
    .requests()
    .filter((r) => r.method === 'POST' && /\/emails$/.test(r.path))
    .map((r) => ({ key: r.headers['idempotency-key'], status: r.status }));
}

/** The POST /emails requests that carried `key`. */
export const postsWith = (sandbox: EmailSandbox, key: string) => posts(sandbox).filter((p) => p.key === key);

/** The distinct idempotency keys of POST /emails requests the sandbox answered 2xx (a message exists for each). */
export function acceptedKeys(sandbox: EmailSandbox): string[] {
  const keys = posts(sandbox)
    .filter((p) => p.status !== null && p.status >= 200 && p.status < 300)
    .map((p) => p.key ?? '(none)');
  return [...new Set(keys)];
}

/** Opens a block's store and sandbox, and gives its tests the `Engine` of `name`. */
export function useEngine(name: EngineName): Engine {
  let redis: TestRedis | undefined;
  let postgres: TestPostgres | undefined;
  let pool: pg.Pool | undefined;
  let sandbox: EmailSandbox | undefined;
  let frozen = false;
  let isDown = false;
  const open: EngineApp[] = [];

  beforeAll(async () => {
    if (name === 'queue') redis = await startRedis();
    else {
      postgres = await startPostgres();
      pool = new pg.Pool({ connectionString: postgres.url, max: 4 });
      pool.on('error', () => undefined);
      await pool.query('CREATE TABLE IF NOT EXISTS orders (id serial PRIMARY KEY, ref text NOT NULL)');
    }
    sandbox = await EmailSandbox.start(SANDBOX_OPTIONS);
  }, 60_000);
  afterEach(async () => {
    if (frozen) engine.thaw();
    if (isDown) await engine.up();
    await Promise.all(open.splice(0).map((a) => a.close().catch(() => undefined)));
  }, 30_000);
  afterAll(async () => {
    await sandbox?.close();
    await pool?.end().catch(() => undefined);
    await postgres?.stop();
    await redis?.stop();
  }, 30_000);
  beforeEach(() => sandbox?.reset());

  const need = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what} is not available on the ${name} engine`);
    return value;
  };

  async function queueApp(o: EngineAppOptions): Promise<EngineApp> {
    const namespace = o.namespace ?? fresh('q');
    const { moduleRef, close } = await emailApp({
      sandbox: need(sandbox, 'sandbox'),
      timeoutMs: 3000,
      ...o.email,
      imports: [
        EmailQueueModule.forRoot({
          connection: need(redis, 'Redis').url,
          queueName: namespace,
          worker: o.worker ?? true,
          concurrency: o.concurrency ?? 2,
          attempts: o.attempts ?? 3,
          backoff: { delayMs: 100, maxDelayMs: 300 },
          closeTimeoutMs: o.closeTimeoutMs ?? 5000,
          ...(o.commandTimeoutMs !== undefined ? { commandTimeoutMs: o.commandTimeoutMs } : {}),
        }),
      ],
    });
    const queue = moduleRef.get(EmailQueue);
    const jobs: JobsApi = queue;
    return track({ jobs, namespace, queue, close: once(close) });
  }

  async function outboxApp(o: EngineAppOptions): Promise<EngineApp> {
    const namespace = o.namespace ?? fresh('ob_');
    const { moduleRef, close } = await emailApp({
      sandbox: need(sandbox, 'sandbox'),
      timeoutMs: 3000,
      ...o.email,
      imports: [
        EmailOutboxModule.forRoot({
          connection: need(postgres, 'PostgreSQL').url,
          schema: namespace,
          worker: o.worker ?? true,
          concurrency: o.concurrency ?? 2,
          attempts: o.attempts ?? 3,
          poolSize: 6,
          pollingIntervalMs: 200,
          maintenanceIntervalMs: 1000,
          backoff: { delayMs: 1000, maxDelayMs: 1000 },
          closeTimeoutMs: o.closeTimeoutMs ?? 5000,
          ...(o.attemptTimeoutMs !== undefined ? { attemptTimeoutMs: o.attemptTimeoutMs } : {}),
          ...(o.commandTimeoutMs !== undefined ? { commandTimeoutMs: o.commandTimeoutMs } : {}),
        }),
      ],
    });
    const outbox = moduleRef.get(EmailOutbox);
    const jobs: JobsApi = outbox;
    return track({ jobs, namespace, outbox, close: once(close) });
  }

  function track(app: EngineApp): EngineApp {
    open.push(app);
    return app;
  }

  async function forgetQueue(app: EngineApp): Promise<void> {
    const bull = need(app.queue, 'the queue').bullQueue;
    // BullMQ completes a job a moment after the `sent` event: wait for its jobs to finish first.
    const deadline = Date.now() + 10_000;
    for (;;) {
      const busy = await bull.getJobCounts('active', 'waiting', 'delayed', 'prioritized');
      const n = Object.values(busy).reduce((a, b) => a + (b ?? 0), 0);
      if (n === 0 || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    // BullMQ's retention is each job's own: `removeOnComplete` / `removeOnFail` ages, which the queue sets from
    // `keepSentForMs` / `keepFailedForMs`. Applied here as BullMQ applies it, job by job.
    const finished = await bull.getJobs(['completed', 'failed']);
    if (finished.length === 0) throw new Error('the queue holds no finished job to apply its retention to');
    for (const job of finished) {
      const keep = (job.failedReason ? job.opts.removeOnFail : job.opts.removeOnComplete) as { age?: number };
      if (typeof keep?.age !== 'number') throw new Error(`job ${job.id} has no retention age`);
      if (Date.now() - (job.finishedOn ?? 0) > keep.age * 1000) await job.remove();
    }
  }

  async function forgetOutbox(app: EngineApp): Promise<void> {
    const db = need(pool, 'the pool');
    const queueName = 'email'; // the outbox's default queueName, which `app()` keeps
    const s = `"${app.namespace}"`;
    // The worker ends pg-boss's job a moment after the `sent` event: wait for its rows to be finished first.
    const deadline = Date.now() + 10_000;
    for (;;) {
      const { rows } = await db.query<{ n: string }>(
        `SELECT count(*) AS n FROM ${s}.job WHERE name = $1 AND state = 'active'`,
        [queueName],
      );
      if (Number(rows[0]?.n) === 0 || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    // pg-boss 10's maintenance moves finished jobs to its archive (a pg-boss of the app's own on the same schema does
    // it after its own `archiveCompletedAfterSeconds`, 12 hours by default): all of them, here, as its statement does.
    const columns =
      'id, name, priority, data, state, retry_limit, retry_count, retry_delay, retry_backoff, start_after, ' +
      'started_on, singleton_key, singleton_on, expire_in, created_on, completed_on, keep_until, dead_letter, policy, output';
    const { rowCount } = await db.query(
      `WITH moved AS (DELETE FROM ${s}.job WHERE name = $1 AND state IN ('completed', 'failed', 'cancelled') ` +
        `RETURNING *) INSERT INTO ${s}.archive (${columns}) SELECT ${columns} FROM moved`,
      [queueName],
    );
    if (!rowCount) throw new Error('pg-boss held no finished job to archive');
    const { rows } = await db.query<{ n: string }>(
      `SELECT count(*) AS n FROM ${s}.job WHERE name = $1 AND state IN ('completed', 'failed', 'cancelled')`,
      [queueName],
    );
    if (Number(rows[0]?.n) !== 0) throw new Error(`pg-boss still holds ${rows[0]?.n} finished rows`);
  }

  async function dumpQueue(): Promise<string> {
    const client = new Redis(need(redis, 'Redis').url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await client.connect();
    try {
      const out: string[] = [];
      for (const key of await client.keys('*')) {
        const type = await client.type(key);
        const value =
          type === 'string'
            ? await client.get(key)
            : type === 'hash'
              ? JSON.stringify(await client.hgetall(key))
              : type === 'list'
                ? JSON.stringify(await client.lrange(key, 0, -1))
                : type === 'set'
                  ? JSON.stringify(await client.smembers(key))
                  : type === 'zset'
                    ? JSON.stringify(await client.zrange(key, '0', '-1'))
                    : type === 'stream'
                      ? JSON.stringify(await client.xrange(key, '-', '+'))
                      : '';
        out.push(`${key} ${value}`);
      }
      return out.join('\n');
    } finally {
      client.disconnect();
    }
  }

  async function dumpOutbox(app: EngineApp): Promise<string> {
    const db = need(pool, 'the pool');
    const { rows: tables } = await db.query<{ t: string }>(
      `SELECT table_name AS t FROM information_schema.tables WHERE table_schema = $1`,
      [app.namespace],
    );
    const out: string[] = [];
    for (const { t } of tables) {
      const { rows } = await db.query<{ r: string }>(
        `SELECT row_to_json(x)::text AS r FROM "${app.namespace}"."${t}" x`,
      );
      for (const { r } of rows) out.push(`${t} ${r}`);
    }
    return out.join('\n');
  }

  const engine: Engine = {
    name,
    dump: (app) => (name === 'queue' ? dumpQueue() : dumpOutbox(app)),
    get sandbox() {
      return need(sandbox, 'sandbox');
    },
    app: (options = {}) => (name === 'queue' ? queueApp(options) : outboxApp(options)),
    freeze() {
      frozen = true;
      if (name === 'queue') need(redis, 'Redis').pause();
      else need(postgres, 'PostgreSQL').pause();
    },
    thaw() {
      frozen = false;
      if (name === 'queue') need(redis, 'Redis').resume();
      else need(postgres, 'PostgreSQL').resume();
    },
    async down() {
      isDown = true;
      if (name === 'queue') await need(redis, 'Redis').kill();
      else await need(postgres, 'PostgreSQL').kill();
    },
    async up() {
      isDown = false;
      if (name === 'queue') await need(redis, 'Redis').restart();
      else await need(postgres, 'PostgreSQL').restart();
    },
    forget: (app) => (name === 'queue' ? forgetQueue(app) : forgetOutbox(app)),
    async inTx(work) {
      const client = await need(pool, 'an app transaction').connect();
      try {
        await client.query('BEGIN');
        const result = await work(client);
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    },
    get pool() {
      return need(pool, 'the pool');
    },
    get unavailableError(): ErrorClass {
      return name === 'queue'
        ? queueEntry.EmailQueueUnavailableError
        : outboxEntry.EmailOutboxUnavailableError;
    },
    get conflictError(): ErrorClass {
      return name === 'queue' ? queueEntry.EmailJobConflictError : outboxEntry.EmailJobConflictError;
    },
    get cancelledError(): ErrorClass {
      const found = name === 'queue' ? queueEntry.EmailJobCancelledError : outboxEntry.EmailJobCancelledError;
      if (typeof found !== 'function')
        throw new Error(`./${name} does not export EmailJobCancelledError (API.md)`);
      return found;
    },
  };
  return engine;
}

function once(close: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => (closing ??= close());
}

/** What `errorOf` gives for a call that did not reject (so that a failed `toBeInstanceOf` names it). */
export class ResolvedInsteadOfRejecting extends Error {
  constructor(readonly value: unknown) {
    super(`expected a rejection, the call resolved with ${JSON.stringify(value)}`);
    this.name = 'ResolvedInsteadOfRejecting';
  }
}

/** The error a call rejected with, or a `ResolvedInsteadOfRejecting`: for `expect(...).toBeInstanceOf`. */
export async function errorOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    return new ResolvedInsteadOfRejecting(await promise);
  } catch (err) {
    return err;
  }
}

export { EmailError };

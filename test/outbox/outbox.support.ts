import { randomUUID } from 'node:crypto';
import type { TestingModule } from '@nestjs/testing';
import pg from 'pg';
import {
  EmailOutbox,
  EmailOutboxModule,
  EmailOutboxWorker,
  type EmailOutboxOptions,
} from '../../lib/outbox/index.js';
import { EmailSandbox as Sandbox, type SandboxOptions } from '../../lib/testing/index.js';
import { emailApp } from '../support/email-app.js';
import { startPostgres, type TestPostgres } from '../support/postgres-server.mjs';

/** The input outbox specs send (a new subject per call so that findSent tells them apart). */
export function mail(subject = `Order ${randomUUID().slice(0, 8)}`) {
  return { from: 'shop@example.com', to: ['ada@example.com'], subject, text: 'Hello' };
}

/**
 * `count` look-alike emails (one sender, recipient and subject; the bodies differ: `Body <jobId>`), written in
 * calls of 100, with job ids `<prefix>:0000`, `<prefix>:0001`, ... in order. Returns the job ids.
 */
export async function writeBacklog(outbox: EmailOutbox, prefix: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let call = 0; call * 100 < count; call++) {
    const items = Array.from({ length: Math.min(100, count - call * 100) }, (_, i) => {
      const jobId = `${prefix}:${String(call * 100 + i).padStart(4, '0')}`;
      ids.push(jobId);
      return { input: { ...mail('Your order'), text: `Body ${jobId}` }, options: { jobId } };
    });
    await outbox.sendMany(items);
  }
  return ids;
}

/** A pg-boss schema no other spec uses (each spec its own tables, also on a shared DATABASE_URL). */
export const freshSchema = (): string => `ob_${randomUUID().replaceAll('-', '').slice(0, 12)}`;

/** Fast settings for specs: quick polling, maintenance and attempt expiry, short backoff. */
export const FAST = {
  pollingIntervalMs: 500,
  maintenanceIntervalMs: 1000,
  backoff: { delayMs: 1000, maxDelayMs: 1000 },
} satisfies Partial<EmailOutboxOptions>;

/** An app with EmailModule on the sandbox and EmailOutboxModule on PostgreSQL. */
export async function outboxApp(
  sandbox: Sandbox,
  options: Partial<EmailOutboxOptions> & { connection: EmailOutboxOptions['connection'] },
): Promise<{ moduleRef: TestingModule; outbox: EmailOutbox; close: () => Promise<void> }> {
  const { moduleRef, close } = await emailApp({
    apiKey: sandbox.apiKey,
    baseUrl: sandbox.baseUrl,
    timeoutMs: 3000,
    imports: [EmailOutboxModule.forRoot({ schema: freshSchema(), ...FAST, ...options })],
  });
  return { moduleRef, outbox: moduleRef.get(EmailOutbox), close };
}

/** POST /emails requests the sandbox received, with their Idempotency-Key. */
export function posts(sandbox: Sandbox): Array<{ key: string | undefined; status: number | null }> {
  return sandbox
    .requests()
    .filter((r) => r.method === 'POST' && r.path.endsWith('/emails'))
    .map((r) => ({ key: r.headers['idempotency-key'], status: r.status }));
}

/** What outbox specs run against: one PostgreSQL, one pool for the app's own tables, one sandbox per file. */
export interface OutboxWorld {
  postgres: TestPostgres;
  pool: pg.Pool;
  sandbox: Sandbox;
}

/** Starts PostgreSQL and a sandbox before the spec file's tests and stops them after; the sandbox is reset before each. */
export function useOutboxWorld(sandboxOptions: SandboxOptions = {}): OutboxWorld {
  const world = {} as OutboxWorld;
  beforeAll(async () => {
    world.postgres = await startPostgres();
    world.pool = new pg.Pool({ connectionString: world.postgres.url, max: 5 });
    world.pool.on('error', () => undefined);
    await world.pool.query('CREATE TABLE IF NOT EXISTS orders (id serial PRIMARY KEY, ref text NOT NULL)');
    world.sandbox = await Sandbox.start(sandboxOptions);
  }, 60_000);
  afterAll(async () => {
    await world.sandbox?.close();
    await world.pool?.end();
    await world.postgres?.stop();
  });
  beforeEach(() => world.sandbox.reset());
  return world;
}

/** Runs `work` in a pg transaction on a client of `pool`: COMMIT when it resolves, ROLLBACK when it throws. */
export async function inTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK');
    throw err;
  } finally {
    client.release();
  }
}

/** Waits until `check` is true (polling), or fails after `timeoutMs`. */
export async function until(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Waits until the app's worker has made a whole fetch that began after this call (it counts a fetch as it begins
 * and makes one at a time: the second begun means the first is over): a job committed before the call, or one a
 * rolled-back call would have left behind, was in that fetch's reach. An order, not a time window.
 */
export async function workerLooked(moduleRef: TestingModule, timeoutMs = 15_000): Promise<void> {
  const stats = moduleRef.get(EmailOutboxWorker).stats;
  const from = stats.fetches;
  await until(() => stats.fetches >= from + 2, timeoutMs, 'a whole fetch of the worker');
}

/** Lets the outbox's workers poll a few more times, so that a job that should not exist would have been sent. */
export const settle = (ms = 1500) => new Promise((r) => setTimeout(r, ms));

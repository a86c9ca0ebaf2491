// What the specs of the outbox on production PostgreSQL share (a pooler, a failover, a DBA's limits): the app, the
// orders written with their email in one transaction, and the check that each committed order has one email.
import { randomUUID } from 'node:crypto';
import type { TestingModule } from '@nestjs/testing';
import type pg from 'pg';
import type { EmailInput } from '../../lib/index.js';
import {
  EmailOutbox,
  EmailOutboxModule,
  EmailOutboxWorker,
  type EmailOutboxOptions,
} from '../../lib/outbox/index.js';
import { EmailSandbox } from '../../lib/testing/index.js';
import { lookAlike, SANDBOX_OPTIONS, templated } from '../jobs/jobs.support.js';
import { CapturingLogger } from '../support/capturing.logger.js';
import { emailApp } from '../support/email-app.js';

export { SANDBOX_OPTIONS };

/** The app's own table, written in the same transaction as each email. */
export const ORDERS_TABLE = 'CREATE TABLE IF NOT EXISTS orders (ref text PRIMARY KEY)';

/**
 * The mail of order `i`: look-alike inline mail (one sender, recipient and subject; the body names the order),
 * template mail every fourth order, and every fifth order's input identical to the order before it (two jobs
 * with one input: two emails).
 */
export function mailOf(run: string, i: number): EmailInput {
  const n = i % 5 === 0 && i > 0 ? i - 1 : i;
  return n % 4 === 0 ? templated(`${run}-${n}`) : lookAlike(`Order ${run}-${n} is confirmed`);
}

/** A pg-boss schema of its own per app (also on a shared server). */
export const freshSchema = (): string => `ob_${randomUUID().replaceAll('-', '').slice(0, 12)}`;

/** An app with EmailModule on `sandbox` and EmailOutboxModule with `options`; its worker's log lines kept. */
export async function productionApp(
  sandbox: EmailSandbox,
  options: Partial<EmailOutboxOptions> & { connection: EmailOutboxOptions['connection'] },
): Promise<{
  moduleRef: TestingModule;
  outbox: EmailOutbox;
  worker: EmailOutboxWorker;
  logger: CapturingLogger;
  schema: string;
  close: () => Promise<void>;
}> {
  const logger = new CapturingLogger();
  const schema = options.schema ?? freshSchema();
  const { moduleRef, close } = await emailApp({
    apiKey: sandbox.apiKey,
    baseUrl: sandbox.baseUrl,
    timeoutMs: 3000,
    imports: [
      EmailOutboxModule.forRoot({
        schema,
        pollingIntervalMs: 200,
        maintenanceIntervalMs: 1000,
        backoff: { delayMs: 200, maxDelayMs: 500 },
        ...options,
      }),
    ],
  });
  moduleRef.useLogger(logger);
  return {
    moduleRef,
    outbox: moduleRef.get(EmailOutbox),
    worker: moduleRef.get(EmailOutboxWorker),
    logger,
    schema,
    close,
  };
}

/** How each order's transaction ended: committed, rolled back on purpose, or failed (the error kept). */
export interface OrderOutcomes {
  committed: string[];
  rolledBack: string[];
  failed: Array<{ ref: string; error: unknown }>;
}

/** Writes order `i` of `run` and its email in one transaction on `pool` (see `writeOrders`), and records how it ended. */
async function writeOrder(
  pool: pg.Pool,
  outbox: EmailOutbox,
  run: string,
  i: number,
  back: boolean,
  outcomes: OrderOutcomes,
): Promise<void> {
  const ref = `${run}-${i}`;
  let client: pg.PoolClient | undefined;
  const cut = () => undefined; // a connection a failover cut: the next statement says so
  try {
    client = await pool.connect();
    client.on('error', cut);
    await client.query('BEGIN');
    await client.query('INSERT INTO orders (ref) VALUES ($1)', [ref]);
    if (i % 3 === 2)
      await outbox.sendMany(
        [
          { input: mailOf(run, i), options: { jobId: ref } },
          { input: mailOf(run, i), options: { jobId: `${ref}:copy` } },
        ],
        { tx: client },
      );
    else await outbox.send(mailOf(run, i), { tx: client, jobId: ref });
    await client.query(back ? 'ROLLBACK' : 'COMMIT');
    (back ? outcomes.rolledBack : outcomes.committed).push(ref);
  } catch (error) {
    await client?.query('ROLLBACK').catch(() => undefined);
    outcomes.failed.push({ ref, error });
  } finally {
    client?.off('error', cut);
    client?.release();
  }
}

/**
 * Writes orders `from` to `to - 1` of `run`, each in a transaction of its own on `pool` with its email (`send`;
 * `sendMany` of two for every third order, whose second job is `<ref>:copy`), `parallel` at a time; an order
 * `rollBack` picks is rolled back after its email was written. A transaction that fails is reported, not retried.
 */
export async function writeOrders(
  pool: pg.Pool,
  outbox: EmailOutbox,
  run: string,
  range: { from: number; to: number; parallel?: number; rollBack?: (i: number) => boolean },
  outcomes: OrderOutcomes = { committed: [], rolledBack: [], failed: [] },
): Promise<OrderOutcomes> {
  let next = range.from;
  await Promise.all(
    Array.from({ length: range.parallel ?? 4 }, async () => {
      while (next < range.to) {
        const i = next++;
        await writeOrder(pool, outbox, run, i, range.rollBack?.(i) === true, outcomes);
      }
    }),
  );
  return outcomes;
}

/**
 * Writes orders of `run` as `writeOrders` does, `parallel` at a time, until `stop` is called (which resolves with
 * what happened); a transaction that failed is followed by a pause of 50 ms in its line.
 */
export function keepWriting(
  pool: pg.Pool,
  outbox: EmailOutbox,
  run: string,
  parallel = 3,
): { outcomes: OrderOutcomes; stop: () => Promise<OrderOutcomes> } {
  const outcomes: OrderOutcomes = { committed: [], rolledBack: [], failed: [] };
  let next = 0;
  let writing = true;
  const lines = Promise.all(
    Array.from({ length: parallel }, async () => {
      while (writing) {
        const failed = outcomes.failed.length;
        await writeOrder(pool, outbox, run, next++, false, outcomes);
        if (outcomes.failed.length > failed) await new Promise((r) => setTimeout(r, 50));
      }
    }),
  );
  return {
    outcomes,
    stop: async () => {
      writing = false;
      await lines;
      return outcomes;
    },
  };
}

/** The orders of `refs` whose row `pool`'s database holds. */
export async function ordersPresent(pool: pg.Pool, refs: readonly string[]): Promise<Set<string>> {
  const { rows } = await pool.query<{ ref: string }>('SELECT ref FROM orders WHERE ref = ANY ($1::text[])', [
    [...refs],
  ]);
  return new Set(rows.map((r) => r.ref));
}

/** The job ids an order wrote (`sendMany` orders have a copy). */
export const jobIdsOf = (ref: string): string[] => {
  const i = Number(ref.slice(ref.lastIndexOf('-') + 1));
  return i % 3 === 2 ? [ref, `${ref}:copy`] : [ref];
};

/**
 * Each job of `refs` sent exactly once: `waitFor` answers its record, no two jobs share one, and the sandbox holds
 * exactly those messages beyond `others` (messages of other jobs already accounted for). Returns the message ids.
 */
export async function expectSentOnce(
  outbox: EmailOutbox,
  sandbox: EmailSandbox,
  refs: readonly string[],
  timeoutMs = 30_000,
): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  for (const jobId of refs.flatMap(jobIdsOf))
    ids.set(jobId, String((await outbox.waitFor(jobId, { timeoutMs })).id));
  expect(new Set(ids.values()).size).toBe(ids.size);
  const messages = sandbox.messages().map((m) => String(m.id));
  expect(messages.sort()).toEqual([...ids.values()].sort());
  return ids;
}

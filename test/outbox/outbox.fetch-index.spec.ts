// pg-boss 10 fetches with `ORDER BY priority DESC, created_on, id` and has no index in that order, so each fetch
// sorted every waiting job of the queue: a backlog slowed the worker meant to drain it. The outbox makes that
// index on the queue's own pg-boss table at boot, once, and never holds up a boot or the app's writes for it.
import type pg from 'pg';
import { EmailOutbox } from '../../lib/outbox/index.js';
import {
  freshSchema,
  inTransaction,
  mail,
  outboxApp,
  posts,
  until,
  useOutboxWorld,
  writeBacklog,
} from './outbox.support.js';

const world = useOutboxWorld();

/** pg-boss's fetch statement as it writes it, explained (not run) on the schema's queue. */
async function explainFetch(app: {
  moduleRef: { get: (t: typeof EmailOutbox) => EmailOutbox };
}): Promise<string> {
  const boss = app.moduleRef.get(EmailOutbox).pgBoss;
  return inTransaction(world.pool, async (client: pg.PoolClient) => {
    const lines: string[] = [];
    await boss.fetch('email', {
      batchSize: 10,
      db: {
        executeSql: async (text: string, values: unknown[]) => {
          const explained = await client.query(`EXPLAIN ${text}`, values);
          lines.push(...explained.rows.map((r: Record<string, string>) => r['QUERY PLAN']));
          return { rows: [] };
        },
      },
    } as never);
    return lines.join('\n');
  });
}

/** Whether the planner has statistics on the queue's pg-boss table (ANALYZE, by hand or by autovacuum). */
async function hasStatistics(schema: string, table: string): Promise<boolean> {
  const { rows } = await world.pool.query(
    `SELECT 1 FROM pg_stats WHERE schemaname = $1 AND tablename = $2 AND attname = 'name'`,
    [schema, table],
  );
  return rows.length > 0;
}

/** The queue's pg-boss table and the index in fetch order on it, if any. */
async function fetchIndex(schema: string): Promise<{ table: string; index: string | undefined }> {
  const { rows } = await world.pool.query(
    `SELECT partition_name FROM "${schema}".queue WHERE name = 'email'`,
  );
  const table = String(rows[0].partition_name);
  const found = await world.pool.query(
    `SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = $2 AND indexdef LIKE '%(name, priority DESC, created_on, id)%'`,
    [schema, table],
  );
  return { table, index: found.rows[0]?.indexname as string | undefined };
}

describe("the outbox's index in pg-boss's fetch order (real PostgreSQL)", () => {
  it("pg-boss's own fetch reads the first waiting jobs of a backlog in order, without sorting them all", async () => {
    const schema = freshSchema();
    const app = await outboxApp(world.sandbox, { connection: world.postgres.url, schema, worker: false });
    try {
      expect((await fetchIndex(schema)).index).toMatch(/_email_fetch$/);
      // A backlog of look-alike mail (one sender, recipient and subject; the bodies differ), written in order.
      const ids = await writeBacklog(app.outbox, 'backlog', 2000);
      await world.pool.query(`ANALYZE "${schema}".job`);
      const plan = await explainFetch(app);
      expect(plan).toMatch(/Index Scan using \S+_email_fetch/);
      expect(plan).not.toMatch(/Sort Key: \S*priority DESC/);
      const boss = app.moduleRef.get(EmailOutbox).pgBoss;
      const fetched = await boss.fetch('email', { batchSize: 10 } as never);
      const order = (fetched as Array<{ data: { jobId: string } }>).map((j) => j.data.jobId);
      // The oldest first: all from the first call (the jobs of one transaction share its time, then go by id).
      expect(new Set(order).size).toBe(10);
      for (const jobId of order) expect(ids.indexOf(jobId)).toBeLessThan(100);
    } finally {
      await app.close();
    }
  }, 60_000);

  it("a queue's first backlog: the worker gives its table statistics once, and later fetches read the index", async () => {
    const schema = freshSchema();
    const producer = await outboxApp(world.sandbox, {
      connection: world.postgres.url,
      schema,
      worker: false,
    });
    try {
      const { table } = await fetchIndex(schema);
      // Autovacuum off on that table for this spec: only the worker can give it statistics here.
      await world.pool.query(`ALTER TABLE "${schema}"."${table}" SET (autovacuum_enabled = false)`);
      // Written before any worker runs, on a table nobody analyzed: the planner would guess a handful of
      // waiting jobs and sort them all at every fetch.
      const first = await writeBacklog(producer.outbox, 'first', 2000);
      expect(await hasStatistics(schema, table)).toBe(false);
      expect(await explainFetch(producer)).toMatch(/Sort Key: \S*priority DESC/);
      const draining = await outboxApp(world.sandbox, {
        connection: world.postgres.url,
        schema,
        concurrency: 20,
      });
      const completed = async () =>
        (await world.pool.query(`SELECT count(*)::int AS n FROM "${schema}".job WHERE state = 'completed'`))
          .rows[0].n as number;
      try {
        // the whole backlog sent (one count, not 2000 look-ups)
        await until(async () => (await completed()) === first.length, 60_000, 'the first backlog sent');
        await until(() => hasStatistics(schema, table), 10_000, 'statistics on the queue table');
      } finally {
        await draining.close();
      }
      // A second backlog, no ANALYZE by hand: pg-boss's fetch reads the index, sorting nothing.
      await writeBacklog(producer.outbox, 'second', 2000);
      const plan = await explainFetch(producer);
      expect(plan).toMatch(/Index Scan using \S+_email_fetch/);
      expect(plan).not.toMatch(/Sort Key: \S*priority DESC/);
      expect(await completed()).toBe(2000);
    } finally {
      await producer.close();
    }
  }, 90_000);

  it('a boot that would wait for the table gives up on the index, and a later boot makes it', async () => {
    const schema = freshSchema();
    const first = await outboxApp(world.sandbox, { connection: world.postgres.url, schema });
    const { table, index } = await fetchIndex(schema);
    expect(index).toBeDefined();
    await world.pool.query(`DROP INDEX "${schema}"."${index}"`);

    // An app transaction that wrote a job and stays open holds the table: the next boot does not wait for it.
    const client = await world.pool.connect();
    try {
      await client.query('BEGIN');
      await first.outbox.send(mail('Held open'), { tx: client, jobId: 'held:1' });
      const second = await outboxApp(world.sandbox, { connection: world.postgres.url, schema });
      expect((await fetchIndex(schema)).index).toBeUndefined();
      await client.query('COMMIT');
      await second.outbox.waitFor('held:1', { timeoutMs: 15_000 });
      await second.close();
    } finally {
      client.release();
    }
    expect(posts(world.sandbox)).toHaveLength(1);

    const third = await outboxApp(world.sandbox, { connection: world.postgres.url, schema });
    await until(async () => (await fetchIndex(schema)).index !== undefined, 5_000, 'the index');
    expect((await fetchIndex(schema)).table).toBe(table);
    await third.close();
    await first.close();
  }, 60_000);
});

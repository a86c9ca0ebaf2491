// The worker fetches its jobs and reads their records in one statement (pg-boss's fetch as a CTE, each fetched job
// joined to its record). Each record must be found by its key whatever the planner believes of the tables: once
// autovacuum had analyzed a records table of 14,000 kept records, a plain join of a fetch of 10 was planned as a
// hash of every record (64 ms a fetch, measured in the loaded-latency bench, against 0.3 ms by key).
import { EmailOutbox } from '../../lib/outbox/index.js';
import { outboxSql } from '../../lib/outbox/outbox-sql.helpers.js';
import { freshSchema, inTransaction, outboxApp, useOutboxWorld, writeBacklog } from './outbox.support.js';

const world = useOutboxWorld();

describe("the worker's fetch with its records, on analyzed tables of many kept records (real PostgreSQL)", () => {
  it('a fetch of 20 finds each record by its key, and reads the record of every job it takes', async () => {
    const schema = freshSchema();
    const app = await outboxApp(world.sandbox, { connection: world.postgres.url, schema, worker: false });
    try {
      // 6,000 look-alike jobs (one sender, recipient and subject; the bodies differ), written in calls of 100.
      await writeBacklog(app.outbox, 'kept', 6000);
      // All but the last 30 done in pg-boss, as after a day of sending: their records are kept, nothing fetches them.
      await world.pool.query(
        `UPDATE "${schema}".job SET state = 'completed', completed_on = now() WHERE name = 'email' ` +
          `AND data->>'jobId' < 'kept:5970'`,
      );
      // As autovacuum leaves the tables between its rounds: pg-boss's vacuumed (its size known, no statistics on
      // its columns yet), the records' analyzed.
      await world.pool.query(`VACUUM "${schema}".job`);
      await world.pool.query(`ANALYZE "${schema}".email_job`);

      const fetchJoined = outboxSql(schema).fetchJoined;
      const boss = app.moduleRef.get(EmailOutbox).pgBoss;
      const { plan, rows } = await inTransaction(world.pool, async (client) => {
        // As the worker's connections plan: for the values of each execution. In the bench the planner guessed
        // hundreds of fetched jobs where there were 10, and a hash of every record looked cheaper than a lookup
        // per job; with loops priced out the same way here, the statement must still find each record by its key.
        await client.query('SET LOCAL plan_cache_mode = force_custom_plan');
        await client.query('SET LOCAL enable_nestloop = off');
        let explained = '';
        let fetched: Array<Record<string, unknown>> = [];
        await boss.fetch('email', {
          batchSize: 20,
          db: {
            executeSql: async (text: string, values: unknown[]) => {
              const lines = await client.query(`EXPLAIN ${fetchJoined(text)}`, values);
              explained = lines.rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
              fetched = (await client.query(fetchJoined(text), values)).rows;
              return { rows: fetched };
            },
          },
        } as never);
        return { plan: explained, rows: fetched };
      });
      expect(plan).not.toMatch(/(Seq Scan|Bitmap Heap Scan) on email_job/);
      expect(plan).toMatch(/Index Scan using email_job_pkey on email_job/);
      // The 20 oldest of the 30 waiting jobs, each with its own record (its body names its job).
      expect(rows).toHaveLength(20);
      for (const row of rows) {
        const jobId = (row.data as { jobId: string }).jobId;
        expect(jobId >= 'kept:5970').toBe(true);
        const record = JSON.parse(String(row.body)) as { jobId: string; input: { text: string } };
        expect(record.jobId).toBe(jobId);
        expect(record.input.text).toBe(`Body ${jobId}`);
        expect(String(row.version)).toBe('1');
      }
    } finally {
      await app.close();
    }
  }, 90_000);
});

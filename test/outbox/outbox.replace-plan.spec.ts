// The worker's compare-and-sets write many records in one statement (claims and outcomes, each final one also
// ending its pg-boss job). Each row must be found by its key whatever the planner believes of the tables: on a
// queue's tables not yet analyzed, a plain join of a batch of 26 was planned as a scan of every record.
import { outboxSql } from '../../lib/outbox/outbox-sql.helpers.js';
import { freshSchema, inTransaction, outboxApp, useOutboxWorld, writeBacklog } from './outbox.support.js';

const world = useOutboxWorld();

describe("the worker's compare-and-sets on tables never analyzed (real PostgreSQL)", () => {
  it('a batch of 40 outcomes finds each record by its key and each pg-boss job by its id, and writes them all', async () => {
    const schema = freshSchema();
    const app = await outboxApp(world.sandbox, { connection: world.postgres.url, schema, worker: false });
    try {
      // 2,000 look-alike jobs (one sender, recipient and subject; the bodies differ), written in calls of 100.
      await writeBacklog(app.outbox, 'plan', 2000);
      const { rows: stats } = await world.pool.query(
        `SELECT count(*)::int AS n FROM pg_stats WHERE schemaname = $1`,
        [schema],
      );
      expect(stats[0].n).toBe(0);
      // 40 of them as the worker holds them when their sends answered: taken in pg-boss, each record `active`.
      const { rows: taken } = await world.pool.query(
        `UPDATE "${schema}".job SET state = 'active', started_on = now() WHERE name = 'email' AND id IN ` +
          `(SELECT id FROM "${schema}".job WHERE name = 'email' ORDER BY data->>'jobId' LIMIT 40) ` +
          `RETURNING id::text AS engine_id, data->>'jobId' AS job_id`,
      );
      const held = await world.pool.query(
        `SELECT job_id, version::text AS version, body FROM "${schema}".email_job WHERE job_id = ANY($1)`,
        [taken.map((r: Record<string, string>) => r.job_id)],
      );
      const engineIdOf = new Map(taken.map((r: Record<string, string>) => [r.job_id, r.engine_id]));
      const records = held.rows.map((r: Record<string, string>) => ({
        ...JSON.parse(r.body),
        state: 'sent',
        record: { id: `msg-${r.job_id}`, note: 'a NUL \u0000 and "quotes"' },
      }));
      const values = [
        'email',
        held.rows.map((r: Record<string, string>) => r.job_id),
        held.rows.map((r: Record<string, string>) => r.version),
        JSON.stringify(records),
        held.rows.map(() => Date.now() + 86_400_000),
        held.rows.map((r: Record<string, string>) => engineIdOf.get(r.job_id)),
        held.rows.map(() => 'completed'),
        held.rows.map((r: Record<string, string>) => JSON.stringify({ messageId: `msg-${r.job_id}` })),
      ];
      const text = outboxSql(schema).replaceManyEnding;
      const { plan, changed } = await inTransaction(world.pool, async (client) => {
        // As the worker's connections plan: for the values of each execution.
        await client.query('SET LOCAL plan_cache_mode = force_custom_plan');
        const explained = await client.query(`EXPLAIN ${text}`, values);
        const result = await client.query(text, values);
        return {
          plan: explained.rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n'),
          changed: result.rows.length,
        };
      });
      expect(plan).not.toMatch(/(Seq Scan|Bitmap Heap Scan) on email_job/);
      expect(plan).toMatch(/Index Scan using email_job_pkey on email_job/);
      expect(plan).toMatch(/Tid Scan on email_job/);
      expect(changed).toBe(40);
      // Every record written as given, every pg-boss job ended with its own output; the others untouched.
      const after = await world.pool.query(
        `SELECT r.job_id, r.body, j.state, j.output->>'messageId' AS message_id FROM "${schema}".email_job r ` +
          `JOIN "${schema}".job j ON j.name = 'email' AND j.data->>'jobId' = r.job_id WHERE r.job_id = ANY($1)`,
        [values[1]],
      );
      for (const row of after.rows as Array<Record<string, string>>) {
        expect(JSON.parse(row.body)).toMatchObject({ state: 'sent', record: { id: `msg-${row.job_id}` } });
        expect(JSON.parse(row.body).record.note).toBe('a NUL \u0000 and "quotes"');
        expect(row).toMatchObject({ state: 'completed', message_id: `msg-${row.job_id}` });
      }
      expect(after.rows).toHaveLength(40);
      const { rows: others } = await world.pool.query(
        `SELECT count(*)::int AS n FROM "${schema}".job WHERE name = 'email' AND state = 'created'`,
      );
      expect(others[0].n).toBe(1960);
    } finally {
      await app.close();
    }
  }, 60_000);
});

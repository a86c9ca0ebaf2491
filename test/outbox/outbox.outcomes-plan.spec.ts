// The worker writes the outcomes of many taken jobs in one statement (`outboxSql.outcomes`: each row its own state,
// output and data). Each row must be found by its pg-boss id whatever the planner believes of the table: on a
// queue's table not yet analyzed, a plain join of a batch was planned as a scan of every job.
import { jsonbOf, outboxSql } from '../../lib/outbox/outbox-sql.helpers.js';
import { freshSchema, inTransaction, outboxApp, useOutboxWorld, writeBacklog } from './outbox.support.js';

const world = useOutboxWorld();

describe("the worker's outcomes on a table never analyzed (real PostgreSQL)", () => {
  it('a batch of 40 outcomes finds each job by its id, and writes each its own output and data', async () => {
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
      // 40 of them as the worker holds them when their sends answered: taken (active) in pg-boss.
      const { rows: taken } = await world.pool.query(
        `UPDATE "${schema}".job SET state = 'active', started_on = now() WHERE name = 'email' AND id IN ` +
          `(SELECT id FROM "${schema}".job WHERE name = 'email' ORDER BY data->>'jobId' LIMIT 40) ` +
          `RETURNING id::text AS id, data->>'jobId' AS job_id`,
      );
      // 30 sent (each its own message record, a NUL and quotes in it), 10 given back for later with new data
      const sent = taken.slice(0, 30) as Array<Record<string, string>>;
      const later = taken.slice(30) as Array<Record<string, string>>;
      const log = (jobId: string) => ({ id: `msg-${jobId}`, note: 'a NUL \u0000 and "quotes"' });
      const values = [
        'email',
        [...sent, ...later].map((r) => r.id),
        [...sent.map(() => 'sent'), ...later.map(() => 'later')],
        [...sent.map(() => null), ...later.map(() => Date.now() + 60_000)],
        `[${[...sent.map((r) => jsonbOf(log(r.job_id))), ...later.map(() => 'null')].join(',')}]`,
        `[${[...sent.map(() => 'null'), ...later.map((r) => JSON.stringify({ jobId: r.job_id, attempts: 1 }))].join(',')}]`,
        30 * 86_400_000,
        7 * 86_400_000,
      ];
      const { rows: tables } = await world.pool.query(
        outboxSql(schema, { archive: false, deletionSeconds: false }).tables,
        [schema],
      );
      const text = outboxSql(schema, {
        archive: tables[0].archive,
        deletionSeconds: tables[0].deletion_seconds,
      }).outcomes;
      const { plan, changed } = await inTransaction(world.pool, async (client) => {
        // As the worker's connections plan: for the values of each execution.
        await client.query('SET LOCAL plan_cache_mode = force_custom_plan');
        const explained = await client.query(`EXPLAIN ${text}`, values);
        const result = await client.query(text, values);
        return {
          plan: explained.rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n'),
          changed: result.rowCount,
        };
      });
      expect(plan).not.toMatch(/Seq Scan on j[0-9a-f]/);
      expect(plan).toMatch(/Index Scan using \S*pkey/);
      expect(plan).toMatch(/Tid Scan on /);
      expect(changed).toBe(40);
      const after = await world.pool.query(
        `SELECT data->>'jobId' AS job_id, state::text AS state, output, data, started_on IS NULL AS given_back ` +
          `FROM "${schema}".job WHERE name = 'email' AND id = ANY($1::uuid[])`,
        [values[1]],
      );
      for (const row of after.rows as Array<Record<string, unknown>>) {
        const jobId = String(row.job_id);
        if (sent.some((r) => r.job_id === jobId)) {
          expect(row.state).toBe('completed');
          expect(JSON.parse(String((row.output as { json: string }).json))).toEqual(log(jobId));
        } else
          expect(row).toMatchObject({ state: 'created', given_back: true, data: { jobId, attempts: 1 } });
      }
      expect(after.rows).toHaveLength(40);
      const { rows: others } = await world.pool.query(
        `SELECT count(*)::int AS n FROM "${schema}".job WHERE name = 'email' AND state = 'created'`,
      );
      expect(others[0].n).toBe(1970);
    } finally {
      await app.close();
    }
  }, 60_000);
});

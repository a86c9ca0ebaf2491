import pg from 'pg';
import { OutboxStatements } from '../../lib/outbox/outbox-statement.store.js';
import { inTransaction, mail, outboxApp, posts, useOutboxWorld } from './outbox.support.js';
import { OutboxBoss } from '../../lib/outbox/outbox-boss.store.js';

const world = useOutboxWorld();

/** The named statements the one connection of `pool` holds now (PostgreSQL's own view). */
async function prepared(pool: pg.Pool): Promise<string[]> {
  const { rows } = await pool.query<{ name: string }>(
    'SELECT name FROM pg_prepared_statements ORDER BY name',
  );
  return rows.map((r) => r.name);
}

describe('the worker statements, prepared once per connection (real PostgreSQL)', () => {
  let pool: pg.Pool;
  beforeEach(() => {
    // One connection, so that what the spec does to it is what the statements meet next.
    pool = new pg.Pool({ connectionString: world.postgres.url, max: 1 });
  });
  afterEach(() => pool.end());

  const text = 'SELECT $1::int + $2::int AS sum';

  it('keeps each statement under a name of its text, and answers as an unnamed one would', async () => {
    const statements = new OutboxStatements(pool, true);
    expect((await statements.query(text, [1, 2])).rows).toEqual([{ sum: 3 }]);
    expect((await statements.query(text, [40, 2])).rows).toEqual([{ sum: 42 }]);
    const names = await prepared(pool);
    expect(names).toHaveLength(1);
    expect(names[0]).toMatch(/^email_outbox_[0-9a-f]{24}$/);
    await statements.query('SELECT $1::text AS other', ['x']);
    expect(await prepared(pool)).toHaveLength(2);
    // Each execution planned for its own values: no generic plan made on a nearly empty table sticks.
    expect((await pool.query('SHOW plan_cache_mode')).rows).toEqual([
      { plan_cache_mode: 'force_custom_plan' },
    ]);
  });

  it('on a pool the app passes, nothing is named and no session setting is changed', async () => {
    const statements = new OutboxStatements(pool, false);
    expect((await statements.query(text, [1, 2])).rows).toEqual([{ sum: 3 }]);
    expect(await prepared(pool)).toEqual([]);
    expect((await pool.query('SHOW plan_cache_mode')).rows).toEqual([{ plan_cache_mode: 'auto' }]);
  });

  it('a statement gone from its connection (a pooler moved the bind): answered unnamed, then never named again', async () => {
    const statements = new OutboxStatements(pool, true);
    await statements.query(text, [1, 1]);
    // What a pooler in transaction mode does: the next bind reaches a server connection without the statement.
    await pool.query('DEALLOCATE ALL');
    expect((await statements.query(text, [2, 3])).rows).toEqual([{ sum: 5 }]);
    expect((await statements.query('SELECT $1::text AS other', ['y'])).rows).toEqual([{ other: 'y' }]);
    expect(await prepared(pool)).toEqual([]);
  });

  it('a name already taken on the connection (a pooler parsed it twice): answered unnamed', async () => {
    // The name this text gets, learnt on another connection.
    const probe = new pg.Pool({ connectionString: world.postgres.url, max: 1 });
    await new OutboxStatements(probe, true).query(text, [1, 1]);
    const [name] = await prepared(probe);
    await probe.end();
    // This connection has it already, though pg's own cache of the connection does not know it.
    await pool.query(`PREPARE ${name}(int, int) AS SELECT $1 + $2 AS sum`);
    const statements = new OutboxStatements(pool, true);
    expect((await statements.query(text, [4, 5])).rows).toEqual([{ sum: 9 }]);
    await pool.query('DEALLOCATE ALL');
    expect((await statements.query(text, [6, 1])).rows).toEqual([{ sum: 7 }]);
    expect(await prepared(pool)).toEqual([]);
  });

  it('an error of the statement itself is the caller’s, and naming stays on', async () => {
    const statements = new OutboxStatements(pool, true);
    await expect(statements.query('SELECT 1 / $1::int AS x', [0])).rejects.toMatchObject({ code: '22012' });
    expect((await statements.query(text, [1, 2])).rows).toEqual([{ sum: 3 }]);
    expect((await prepared(pool)).length).toBeGreaterThan(0);
  });
});

describe('the outbox worker with its statements dropped under it', () => {
  it('every job is sent once while the connections lose their statements', async () => {
    const app = await outboxApp(world.sandbox, {
      connection: world.postgres.url,
      concurrency: 4,
      poolSize: 4,
    });
    // The outbox's own pool, whose connections the statements are named on.
    const pool = app.moduleRef.get(OutboxBoss).pool;
    try {
      const jobIds: string[] = [];
      const subjects = ['Your receipt', 'Your receipt', 'Welcome'];
      for (let round = 0; round < 3; round++) {
        const written = await inTransaction(world.pool, async (client) => {
          const ids: string[] = [];
          for (let i = 0; i < 8; i++) {
            const jobId = `prep-${round}-${i}`;
            // look-alike mail (the same sender, recipient and subject, other bodies) and identical mail
            // (jobs 6 and 7 of a round: the same input under two job ids, two emails)
            await app.outbox.send(
              { ...mail(subjects[i % 3]), text: i >= 6 ? `Same body ${round}` : `Body ${round}-${i}` },
              { tx: client, jobId },
            );
            ids.push(jobId);
          }
          return ids;
        });
        jobIds.push(...written);
        for (const jobId of written) await app.outbox.waitFor(jobId, { timeoutMs: 15_000 });
        // Every connection of the worker's pool forgets its statements before the next round.
        await Promise.all(Array.from({ length: 4 }, () => pool.query('DEALLOCATE ALL')));
      }
      const sent = posts(world.sandbox);
      expect(sent).toHaveLength(jobIds.length);
      expect(new Set(sent.map((p) => p.key)).size).toBe(jobIds.length);
      for (const jobId of jobIds)
        expect(await app.outbox.status(jobId)).toMatchObject({ state: 'sent', attempts: 1 });
    } finally {
      await app.close();
    }
  }, 60_000);
});

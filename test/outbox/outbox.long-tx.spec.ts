// Issue 50, item 2: no call of the job layer holds a lock the worker needs past its own statement. A `cancel` or
// `reschedule` in the app's transaction that comes too late (the job is being sent) answers so, and the app's
// transaction may then run on for as long as it likes: the worker still records the send (the job ends `sent`,
// `waitFor` answers) while that transaction is open, and after it commits or rolls back.
import { EmailOutboxWorker } from '../../lib/outbox/index.js';
import { lookAlike } from '../jobs/jobs.support.js';
import { freshSchema, outboxApp, posts, until, useOutboxWorld, workerLooked } from './outbox.support.js';

const world = useOutboxWorld();

describe('a too-late cancel or reschedule in a long transaction', () => {
  const schema = freshSchema();
  let app: Awaited<ReturnType<typeof outboxApp>>;
  beforeAll(async () => {
    app = await outboxApp(world.sandbox, {
      connection: world.postgres.url,
      schema,
      concurrency: 2,
      pollingIntervalMs: 200,
    });
  }, 30_000);
  afterAll(() => app?.close());
  afterEach(() => world.sandbox.faults.clear());

  it.each(['cancel', 'reschedule'] as const)(
    '%s of a job being sent: too late, and the worker records the send while the transaction is still open',
    async (call) => {
      // the service holds the send for 1.5 s: the job is `active` meanwhile
      world.sandbox.faults.add({ route: 'POST /emails', mode: 'delay', ms: 1500, times: 1 });
      const jobId = `long-tx-${call}`;
      const { idempotencyKey } = await app.outbox.send(lookAlike(`Your receipt (${call})`), { jobId });
      const look = await app.outbox.send(lookAlike(`A look-alike beside it (${call})`), {
        jobId: `${jobId}-beside`,
      });
      await until(async () => (await app.outbox.status(jobId))?.state === 'active', 10_000, 'the attempt');

      const client = await world.pool.connect();
      try {
        await client.query('BEGIN');
        await client.query('INSERT INTO orders (ref) VALUES ($1)', [jobId]);
        const answer =
          call === 'cancel'
            ? await app.outbox.cancel(jobId, { tx: client })
            : await app.outbox.reschedule(jobId, { delayMs: 60_000 }, { tx: client });
        expect(answer).toEqual(
          call === 'cancel' ? { cancelled: false, state: 'active' } : { rescheduled: false, state: 'active' },
        );
        // the app's transaction goes on (a slow request, a long import): the send is recorded meanwhile
        const record = await app.outbox.waitFor(jobId, { timeoutMs: 15_000 });
        expect(await app.outbox.status(jobId)).toMatchObject({
          state: 'sent',
          messageId: record.id,
          attempts: 1,
        });
        await client.query('COMMIT');
      } finally {
        client.release();
      }
      const beside = await app.outbox.waitFor(look.jobId, { timeoutMs: 15_000 });
      expect(beside.id).not.toBe((await app.outbox.status(jobId))?.messageId);
      expect(await app.outbox.status(jobId)).toMatchObject({ state: 'sent' });
      expect(posts(world.sandbox).filter((p) => p.key === idempotencyKey)).toHaveLength(1);
      // pg-boss's own row agrees: completed, not left active until it expires
      const { rows } = await world.pool.query<{ state: string }>(
        `SELECT state FROM "${schema}".job WHERE data->>'jobId' = $1`,
        [jobId],
      );
      expect(rows.map((r) => r.state)).toEqual(['completed']);
    },
    40_000,
  );

  it('a cancel that wins still holds the job for its transaction, and a rollback gives it back to be sent', async () => {
    const jobId = 'long-tx-rolled-back-cancel';
    const dueAt = Date.now() + 1500;
    await app.outbox.send(lookAlike('Your reminder'), { jobId, delayMs: 1500 });
    const client = await world.pool.connect();
    try {
      await client.query('BEGIN');
      expect(await app.outbox.cancel(jobId, { tx: client })).toEqual({ cancelled: true });
      // due now, but the transaction that cancels it is open: a whole fetch of the worker after it fell due
      // takes nothing (no send begun), and nothing reached the service
      const runs = app.moduleRef.get(EmailOutboxWorker).stats.jobs;
      await until(() => Date.now() > dueAt, 10_000, 'the due time');
      await workerLooked(app.moduleRef);
      expect(app.moduleRef.get(EmailOutboxWorker).stats.jobs).toBe(runs);
      expect(posts(world.sandbox)).toHaveLength(0);
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
    await app.outbox.waitFor(jobId, { timeoutMs: 15_000 });
    expect(posts(world.sandbox)).toHaveLength(1);
  }, 40_000);
});

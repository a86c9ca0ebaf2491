import pg from 'pg';
import { EmailOutboxWorker } from '../../lib/outbox/index.js';
import { outboxChannel } from '../../lib/outbox/outbox-sql.helpers.js';
import {
  freshSchema,
  inTransaction,
  mail,
  outboxApp,
  posts,
  until,
  useOutboxWorld,
} from './outbox.support.js';

const world = useOutboxWorld();

/**
 * The worker wakes when a transaction that wrote a job commits (a NOTIFY in that transaction), not by polling:
 * polling is set to a minute here, so every email below that goes out within seconds was woken by a commit.
 */
describe('EmailOutbox worker woken by the commit (LISTEN/NOTIFY, real PostgreSQL)', () => {
  const schema = freshSchema();
  let app: Awaited<ReturnType<typeof outboxApp>>;
  let worker: EmailOutboxWorker;
  let listener: pg.Client;
  const heard: string[] = [];
  /** A channel of the spec's own, beside the outbox's: its marks wake no worker. */
  const MARKS = `${schema}_spec_marks`;
  const marks: string[] = [];

  /**
   * Every notification of what committed before this call has reached the spec's listener: PostgreSQL delivers
   * a connection's notifications in commit order, so once a mark committed after them is heard, they were.
   */
  async function heardSoFar(): Promise<void> {
    const mark = String(marks.length + 1);
    await world.pool.query('SELECT pg_notify($1, $2)', [MARKS, mark]);
    await until(() => marks.includes(mark), 10_000, 'the spec’s mark');
  }

  beforeAll(async () => {
    app = await outboxApp(world.sandbox, {
      connection: world.postgres.url,
      schema,
      concurrency: 4,
      pollingIntervalMs: 60_000,
    });
    worker = app.moduleRef.get(EmailOutboxWorker);
    await until(() => worker.listening, 10_000, 'the worker to LISTEN');
    // The spec's own listener on the outbox's channel: what PostgreSQL delivers, seen from outside.
    listener = new pg.Client({ connectionString: world.postgres.url });
    await listener.connect();
    listener.on('notification', (msg) =>
      msg.channel === MARKS ? marks.push(msg.payload ?? '') : heard.push(msg.payload ?? ''),
    );
    await listener.query(`LISTEN "${outboxChannel(schema, 'email')}"`);
    await listener.query(`LISTEN "${MARKS}"`);
  }, 30_000);
  afterAll(async () => {
    await listener?.end();
    await app?.close();
  });
  beforeEach(() => {
    heard.length = 0;
  });

  it('a committed job is sent within seconds although the worker polls once a minute', async () => {
    const { jobId } = await inTransaction(world.pool, (client) =>
      app.outbox.send(mail('Woken by the commit'), { tx: client, jobId: 'notify:commit-1' }),
    );
    const record = await app.outbox.waitFor(jobId, { timeoutMs: 10_000 });
    expect(record.subject).toBe('Woken by the commit');
    expect(heard).toEqual(['']);
  }, 30_000);

  it('a rolled-back transaction notifies no one and sends nothing', async () => {
    const before = worker.stats.notifications;
    const client = await world.pool.connect();
    try {
      await client.query('BEGIN');
      await app.outbox.send(mail('Rolled back'), { tx: client, jobId: 'notify:rollback-1' });
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
    await heardSoFar();
    expect(heard).toEqual([]);
    expect(worker.stats.notifications).toBe(before);
    expect(await app.outbox.status('notify:rollback-1')).toBeNull();
    expect(posts(world.sandbox)).toEqual([]);
  }, 30_000);

  it('one notification per transaction, however many jobs it writes; all of them are sent', async () => {
    const items = Array.from({ length: 12 }, (_, i) => ({
      input: mail(`Batch ${i}`),
      options: { jobId: `notify:batch-${i}` },
    }));
    await inTransaction(world.pool, (client) => app.outbox.sendMany(items, { tx: client }));
    await until(() => posts(world.sandbox).length === 12, 10_000, '12 emails');
    expect(heard).toEqual(['']);
    // the POST reaches the sandbox a moment before the job's record says sent
    for (const { options } of items) {
      await app.outbox.waitFor(options.jobId, { timeoutMs: 10_000 });
      expect(await app.outbox.status(options.jobId)).toMatchObject({ state: 'sent', attempts: 1 });
    }
  }, 30_000);

  it('a delayed job wakes the worker when it falls due (its time is in the notification)', async () => {
    const { jobId } = await app.outbox.send(mail('Later'), { jobId: 'notify:delayed-1', delayMs: 1500 });
    expect(await app.outbox.status(jobId)).toMatchObject({ state: 'delayed' });
    const record = await app.outbox.waitFor(jobId, { timeoutMs: 10_000 });
    expect(record.subject).toBe('Later');
    expect(Number(heard[0])).toBeGreaterThan(Date.now() - 60_000);
  }, 30_000);

  it('a call that adds no job (every job id written before) notifies no one; mixed, the earliest due time wins', async () => {
    const items = [0, 1].map((i) => ({ input: mail(`Again ${i}`), options: { jobId: `notify:again-${i}` } }));
    await inTransaction(world.pool, (client) => app.outbox.sendMany(items, { tx: client }));
    await until(() => heard.length === 1, 10_000, 'the first notification');
    heard.length = 0;
    // The same ids and inputs again: the same jobs, nothing written, so no one is woken.
    await inTransaction(world.pool, (client) => app.outbox.sendMany(items, { tx: client }));
    await heardSoFar();
    expect(heard).toEqual([]);
    // Two jobs for later beside a job id written before: one notification, the earlier due time in it.
    const before = Date.now();
    await inTransaction(world.pool, (client) =>
      app.outbox.sendMany(
        [
          { input: mail('Later, 40 s'), options: { jobId: 'notify:later-40', delayMs: 40_000 } },
          items[0]!,
          { input: mail('Later, 30 s'), options: { jobId: 'notify:later-30', delayMs: 30_000 } },
        ],
        { tx: client },
      ),
    );
    await until(() => heard.length === 1, 10_000, 'one notification');
    await heardSoFar();
    expect(heard).toHaveLength(1);
    expect(Number(heard[0])).toBeGreaterThanOrEqual(before + 30_000);
    expect(Number(heard[0])).toBeLessThan(Date.now() + 30_000 + 1);
    for (const jobId of ['notify:later-40', 'notify:later-30']) await app.outbox.cancel(jobId);
  }, 30_000);

  it('a job rescheduled in a transaction wakes the worker at its new time, on commit only', async () => {
    const { jobId } = await app.outbox.send(mail('Moved'), { jobId: 'notify:moved-1', delayMs: 600_000 });
    await until(() => heard.length === 1, 10_000, 'the first notification');
    heard.length = 0;
    // Rolled back: no notification, the job stays where it was.
    const client = await world.pool.connect();
    try {
      await client.query('BEGIN');
      expect(await app.outbox.reschedule(jobId, { delayMs: 1000 }, { tx: client })).toMatchObject({
        rescheduled: true,
      });
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
    await heardSoFar();
    expect(heard).toEqual([]);
    const before = Date.now();
    await inTransaction(world.pool, (tx) => app.outbox.reschedule(jobId, { delayMs: 1500 }, { tx }));
    await until(() => heard.length === 1, 10_000, 'the notification of the move');
    expect(Number(heard[0])).toBeGreaterThanOrEqual(before + 1500);
    expect(Number(heard[0])).toBeLessThanOrEqual(Date.now() + 1500);
    // Polling is once a minute: the email goes out because the worker looked at the new time.
    const record = await app.outbox.waitFor(jobId, { timeoutMs: 15_000 });
    expect(record.subject).toBe('Moved');
  }, 40_000);

  it('a LISTEN connection that drops is opened again, and commits wake the worker again', async () => {
    const { rows } = await world.pool.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE query = $1 AND pid <> pg_backend_pid()`,
      [`LISTEN "${outboxChannel(schema, 'email')}"`],
    );
    // The worker's and the spec's listener: end both, then the spec listens again.
    expect(rows.length).toBeGreaterThanOrEqual(1);
    await world.pool.query(`SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid`, [
      rows
        .map((r) => r.pid)
        .filter((pid) => pid !== (listener as unknown as { processID: number }).processID),
    ]);
    await until(() => !worker.listening, 10_000, 'the worker to notice');
    await until(() => worker.listening, 10_000, 'the worker to LISTEN again');
    const { jobId } = await inTransaction(world.pool, (client) =>
      app.outbox.send(mail('After the reconnect'), { tx: client, jobId: 'notify:reconnect-1' }),
    );
    const record = await app.outbox.waitFor(jobId, { timeoutMs: 10_000 });
    expect(record.subject).toBe('After the reconnect');
  }, 40_000);
});

describe('outboxChannel', () => {
  it('is a PostgreSQL name of at most 63 characters, distinct per schema and queue', () => {
    expect(outboxChannel('pgboss', 'email')).toBe('email_outbox_pgboss_email');
    const long = outboxChannel('s'.repeat(50), 'q/'.repeat(50));
    expect(long.length).toBeLessThanOrEqual(63);
    expect(long).toMatch(/^[A-Za-z0-9_]+$/);
    expect(outboxChannel('s'.repeat(50), 'a'.repeat(60))).not.toBe(
      outboxChannel('s'.repeat(50), 'b'.repeat(60)),
    );
  });
});

import { EmailValidationError } from '../../lib/index.js';
import { EmailJobConflictError, EmailOutboxTxError } from '../../lib/outbox/index.js';
import {
  inTransaction,
  mail,
  outboxApp,
  posts,
  settle,
  useOutboxWorld,
  workerLooked,
} from './outbox.support.js';

const world = useOutboxWorld();

describe('EmailOutbox in the app transaction (real PostgreSQL, sandbox)', () => {
  let app: Awaited<ReturnType<typeof outboxApp>>;
  beforeAll(async () => {
    app = await outboxApp(world.sandbox, { connection: world.postgres.url, concurrency: 4 });
  }, 30_000);
  afterAll(() => app?.close());

  it('a committed transaction sends exactly one email, with the job id key', async () => {
    const { jobId, idempotencyKey } = await inTransaction(world.pool, async (client) => {
      await client.query(`INSERT INTO orders (ref) VALUES ('commit-1')`);
      return app.outbox.send(mail('Order commit-1'), { tx: client, jobId: 'order:commit-1' });
    });
    const record = await app.outbox.waitFor(jobId, { timeoutMs: 15_000 });
    expect(record.subject).toBe('Order commit-1');
    expect(posts(world.sandbox)).toEqual([{ key: idempotencyKey, status: 201 }]);
    expect(await app.outbox.status(jobId)).toMatchObject({
      state: 'sent',
      messageId: record.id,
      attempts: 1,
    });
  }, 30_000);

  it('a rolled-back transaction sends nothing, and the job does not exist', async () => {
    const client = await world.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(`INSERT INTO orders (ref) VALUES ('rollback-1')`);
      await app.outbox.send(mail('Order rollback-1'), { tx: client, jobId: 'order:rollback-1' });
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
    await workerLooked(app.moduleRef);
    expect(await app.outbox.status('order:rollback-1')).toBeNull();
    expect(posts(world.sandbox)).toEqual([]);
  }, 30_000);

  it('an error the app throws after send rolls the email back with the order', async () => {
    await expect(
      inTransaction(world.pool, async (client) => {
        await client.query(`INSERT INTO orders (ref) VALUES ('app-error-1')`);
        await app.outbox.send(mail('Order app-error-1'), { tx: client, jobId: 'order:app-error-1' });
        throw new Error('payment declined');
      }),
    ).rejects.toThrow('payment declined');
    await workerLooked(app.moduleRef);
    const { rows } = await world.pool.query(`SELECT 1 FROM orders WHERE ref = 'app-error-1'`);
    expect(rows).toEqual([]);
    expect(await app.outbox.status('order:app-error-1')).toBeNull();
    expect(posts(world.sandbox)).toEqual([]);
  }, 30_000);

  it('the same jobId in two transactions, concurrently, is one email', async () => {
    const input = mail('Order twice-1');
    const both = await Promise.all(
      [1, 2].map(() =>
        inTransaction(world.pool, async (client) => {
          const queued = await app.outbox.send(input, { tx: client, jobId: 'order:twice-1' });
          await settle(200); // both transactions open at once
          return queued;
        }),
      ),
    );
    expect(both[0]).toEqual(both[1]);
    await app.outbox.waitFor('order:twice-1', { timeoutMs: 15_000 });
    await workerLooked(app.moduleRef);
    expect(world.sandbox.messages().filter((m) => m.subject === 'Order twice-1')).toHaveLength(1);
    expect(posts(world.sandbox)).toHaveLength(1);
  }, 30_000);

  it('bad input writes nothing, throws EmailValidationError, and leaves the transaction usable', async () => {
    const client = await world.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(`INSERT INTO orders (ref) VALUES ('bad-input-1')`);
      const bad = { from: 'shop@example.com', to: ['not-an-address'], subject: '', text: 'x' };
      await expect(app.outbox.send(bad, { tx: client, jobId: 'order:bad-1' })).rejects.toBeInstanceOf(
        EmailValidationError,
      );
      // the transaction is not aborted: the app goes on and commits its order
      await client.query(`INSERT INTO orders (ref) VALUES ('bad-input-2')`);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    const { rows } = await world.pool.query(
      `SELECT ref FROM orders WHERE ref LIKE 'bad-input-%' ORDER BY ref`,
    );
    expect(rows.map((r: { ref: string }) => r.ref)).toEqual(['bad-input-1', 'bad-input-2']);
    expect(await app.outbox.status('order:bad-1')).toBeNull();
  }, 30_000);

  it('a tx of an unknown kind, a Pool, or a client outside a transaction: an error naming the kinds, nothing written', async () => {
    await expect(app.outbox.send(mail(), { tx: { foo: 1 }, jobId: 'order:unknown-1' })).rejects.toThrow(
      /not a transaction the outbox knows.*pg client.*TypeORM.*MikroORM.*Knex.*Kysely.*Drizzle.*Prisma/s,
    );
    await expect(app.outbox.send(mail(), { tx: world.pool, jobId: 'order:pool-1' })).rejects.toThrow(
      /pg Pool/,
    );
    const client = await world.pool.connect();
    try {
      await expect(app.outbox.send(mail(), { tx: client, jobId: 'order:no-begin-1' })).rejects.toBeInstanceOf(
        EmailOutboxTxError,
      );
    } finally {
      client.release();
    }
    for (const id of ['order:unknown-1', 'order:pool-1', 'order:no-begin-1'])
      expect(await app.outbox.status(id)).toBeNull();
  }, 30_000);

  it('a pg client: BEGIN still queued on it counts; a client that cannot tell its state is asked with a statement', async () => {
    // BEGIN not awaited: the client's last answer said "idle", but the BEGIN runs before the outbox's rows.
    const client = await world.pool.connect();
    try {
      const begun = client.query('BEGIN');
      await app.outbox.send(mail('Queued BEGIN'), { tx: client, jobId: 'order:queued-begin-1' });
      await begun;
      expect(await app.outbox.status('order:queued-begin-1')).toBeNull(); // not committed yet
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    expect(await app.outbox.status('order:queued-begin-1')).not.toBeNull();
    // A client without getTransactionStatus (older pg): the server is asked, outside and inside a block.
    const raw = await world.pool.connect();
    const older = { query: raw.query.bind(raw), release: () => undefined };
    try {
      await expect(
        app.outbox.send(mail(), { tx: older, jobId: 'order:older-outside-1' }),
      ).rejects.toBeInstanceOf(EmailOutboxTxError);
      await raw.query('BEGIN');
      await app.outbox.send(mail('Older pg'), { tx: older, jobId: 'order:older-inside-1' });
      await raw.query('COMMIT');
    } finally {
      raw.release();
    }
    expect(await app.outbox.status('order:older-outside-1')).toBeNull();
    expect(await app.outbox.status('order:older-inside-1')).not.toBeNull();
  }, 30_000);

  it('without tx it writes in a transaction of its own; events report the send', async () => {
    const sent: string[] = [];
    const onSent = ({ jobId }: { jobId: string }) => sent.push(jobId);
    app.outbox.on('sent', onSent);
    try {
      const { jobId } = await app.outbox.send(mail('Own tx'), { jobId: 'own-1' });
      await app.outbox.waitFor(jobId, { timeoutMs: 15_000 });
      expect(sent).toContain('own-1');
    } finally {
      app.outbox.off('sent', onSent);
    }
  }, 30_000);
});

describe('EmailOutbox job ids', () => {
  it('the same jobId with another input is refused (EmailJobConflictError); the first job stays', async () => {
    const app = await outboxApp(world.sandbox, { connection: world.postgres.url, worker: false });
    try {
      await app.outbox.send(mail('First input'), { jobId: 'conflict-1' });
      await expect(app.outbox.send(mail('Other input'), { jobId: 'conflict-1' })).rejects.toBeInstanceOf(
        EmailJobConflictError,
      );
      // the same input again is the same job: no error
      await expect(app.outbox.send(mail('First input'), { jobId: 'conflict-1' })).resolves.toMatchObject({
        jobId: 'conflict-1',
      });
    } finally {
      await app.close();
    }
  }, 30_000);
});

import {
  freshSchema,
  inTransaction,
  mail,
  outboxApp,
  posts,
  until,
  useOutboxWorld,
} from './outbox.support.js';
import { startOutboxWorker, type OutboxWorkerProcess } from './support/outbox-processes.js';

const world = useOutboxWorld();
const children: OutboxWorkerProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.child.exitCode === null) c.child.kill('SIGKILL');
});

const envFor = (schema: string) => ({
  DATABASE_URL: world.postgres.url,
  EMAIL_BASE_URL: world.sandbox.baseUrl,
  EMAIL_API_KEY: world.sandbox.apiKey,
  OUTBOX_SCHEMA: schema,
  ATTEMPT_TIMEOUT_MS: '2000',
  CONCURRENCY: '2',
});

async function kill(worker: OutboxWorkerProcess): Promise<void> {
  worker.child.kill('SIGKILL');
  await worker.exited;
}

describe('EmailOutbox workers killed with SIGKILL (real processes, real PostgreSQL)', () => {
  it('every worker killed right after the commit: a worker started later sends exactly one email', async () => {
    const schema = freshSchema();
    const first = await startOutboxWorker(envFor(schema));
    children.push(first);
    const producer = await outboxApp(world.sandbox, {
      connection: world.postgres.url,
      schema,
      worker: false,
      attemptTimeoutMs: 2000,
    });
    try {
      const { jobId, idempotencyKey } = await inTransaction(world.pool, async (client) => {
        await client.query(`INSERT INTO orders (ref) VALUES ('kill-after-commit')`);
        return producer.outbox.send(mail('Order kill-after-commit'), {
          tx: client,
          jobId: 'kill:after-commit',
        });
      });
      await kill(first); // right after the commit: the job may be unclaimed, claimed, or mid-send
      const second = await startOutboxWorker(envFor(schema));
      children.push(second);
      const record = await producer.outbox.waitFor(jobId, { timeoutMs: 30_000 });
      // The job is final (no attempt of it can expire and run again), and the one process that could still
      // send is gone: what the sandbox holds now is all there will be.
      expect(await producer.outbox.status(jobId)).toMatchObject({ state: 'sent' });
      await kill(second);
      expect(world.sandbox.messages().filter((m) => m.subject === 'Order kill-after-commit')).toHaveLength(1);
      expect(new Set(posts(world.sandbox).map((p) => p.key))).toEqual(new Set([idempotencyKey]));
      expect(record.subject).toBe('Order kill-after-commit');
    } finally {
      await producer.close();
    }
  }, 150_000);

  it('a worker killed mid-send (the service accepted, the answer never came): the retry replays, one email', async () => {
    const schema = freshSchema();
    const doomed = await startOutboxWorker(envFor(schema));
    children.push(doomed);
    const producer = await outboxApp(world.sandbox, {
      connection: world.postgres.url,
      schema,
      worker: false,
      attemptTimeoutMs: 2000,
    });
    try {
      // The service creates the message, then holds its answer: the worker dies before it hears.
      world.sandbox.faults.add({ route: 'POST /emails', mode: 'delay', ms: 1500, at: 'after' });
      const { jobId, idempotencyKey } = await inTransaction(world.pool, (client) =>
        producer.outbox.send(mail('Order kill-mid-send'), { tx: client, jobId: 'kill:mid-send' }),
      );
      await until(() => posts(world.sandbox).length === 1, 15_000, 'the first POST');
      await kill(doomed);
      world.sandbox.faults.clear();
      expect(world.sandbox.messages().filter((m) => m.subject === 'Order kill-mid-send')).toHaveLength(1);
      const rescuer = await startOutboxWorker(envFor(schema));
      children.push(rescuer);
      const record = await producer.outbox.waitFor(jobId, { timeoutMs: 30_000 });
      expect(await producer.outbox.status(jobId)).toMatchObject({ state: 'sent' });
      await kill(rescuer); // the last process that could send: the counts below are final
      expect(world.sandbox.messages().filter((m) => m.subject === 'Order kill-mid-send')).toHaveLength(1);
      expect(posts(world.sandbox).every((p) => p.key === idempotencyKey)).toBe(true);
      expect(posts(world.sandbox).length).toBeGreaterThanOrEqual(2); // the retry reached the service, and was replayed
      expect(world.sandbox.messages().find((m) => m.subject === 'Order kill-mid-send')?.id).toBe(record.id);
    } finally {
      await producer.close();
    }
  }, 150_000);
});

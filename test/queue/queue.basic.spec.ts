import { EmailBadRequestError, EmailOptionsError, EmailValidationError } from '../../lib/index.js';
import { EmailQueueHealthIndicator, EmailQueueModule, idempotencyKeyFrom } from '../../lib/queue/index.js';
import { Test } from '@nestjs/testing';
import { freshQueueName, mail, posts, queueApp, useQueueWorld } from './queue.support.js';

const world = useQueueWorld();

describe('EmailQueue over real Redis and the sandbox', () => {
  it('sends one POST per job with the key derived from its job id', async () => {
    const app = await queueApp(world.sandbox, { connection: world.redis.url, queueName: freshQueueName() });
    try {
      const queued = await app.queue.send(mail(), { jobId: 'welcome-1' });
      expect(queued.idempotencyKey).toBe(app.queue.keyFor('welcome-1'));
      const record = await app.queue.waitFor(queued.jobId, { timeoutMs: 10_000 });
      expect(record.id).toBeGreaterThan(0);
      expect(posts(world.sandbox)).toEqual([{ key: queued.idempotencyKey, status: 201, fault: null }]);
      const status = await app.queue.status(queued.jobId);
      expect(status).toMatchObject({ state: 'sent', messageId: record.id, attempts: 1 });
      expect(await app.queue.status('no-such-job')).toBeNull();
    } finally {
      await app.close();
    }
  });

  it('gives a job without jobId a random id, never the counter', async () => {
    const app = await queueApp(world.sandbox, { connection: world.redis.url, queueName: freshQueueName() });
    try {
      const a = await app.queue.send(mail());
      const b = await app.queue.send(mail());
      expect(a.jobId).toMatch(/^email_[0-9a-f-]{36}$/);
      expect(a.jobId).not.toBe(b.jobId);
      await Promise.all([app.queue.waitFor(a.jobId), app.queue.waitFor(b.jobId)]);
      expect(new Set(posts(world.sandbox).map((p) => p.key)).size).toBe(2);
    } finally {
      await app.close();
    }
  });

  it('queues the same job id twice as one job and one email', async () => {
    const app = await queueApp(world.sandbox, { connection: world.redis.url, queueName: freshQueueName() });
    try {
      const input = mail();
      await app.queue.send(input, { jobId: 'order-7' });
      await app.queue.send(input, { jobId: 'order-7' });
      await app.queue.waitFor('order-7');
      await new Promise((r) => setTimeout(r, 200));
      expect(posts(world.sandbox)).toHaveLength(1);
      expect(world.sandbox.messages()).toHaveLength(1);
    } finally {
      await app.close();
    }
  });

  it('sends many single emails with sendMany', async () => {
    const app = await queueApp(world.sandbox, { connection: world.redis.url, queueName: freshQueueName() });
    try {
      const queued = await app.queue.sendMany(
        [1, 2, 3].map((n) => ({ input: mail(`n${n}`), options: { jobId: `m${n}` } })),
      );
      await Promise.all(queued.map((q) => app.queue.waitFor(q.jobId)));
      expect(world.sandbox.messages()).toHaveLength(3);
    } finally {
      await app.close();
    }
  });

  it('refuses an invalid input before queueing anything', async () => {
    const app = await queueApp(world.sandbox, {
      connection: world.redis.url,
      queueName: freshQueueName(),
      worker: false,
    });
    try {
      await expect(app.queue.send({ ...mail(), to: ['not-an-address'] }, { jobId: 'bad-1' })).rejects.toThrow(
        EmailValidationError,
      );
      expect(await app.queue.status('bad-1')).toBeNull();
      expect(await app.queue.bullQueue.count()).toBe(0);
    } finally {
      await app.close();
    }
  });

  it('ends a job at once on 400 and rebuilds its error in waitFor and status', async () => {
    const app = await queueApp(world.sandbox, { connection: world.redis.url, queueName: freshQueueName() });
    try {
      // The sandbox answers 400 to a send that asks for a template it does not know.
      const { jobId } = await app.queue.send(
        { from: 'shop@example.com', to: ['ada@example.com'], templateId: 99_999, variables: {} },
        { jobId: 'tpl-1' },
      );
      const err = await app.queue.waitFor(jobId).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(EmailBadRequestError);
      expect(err).toMatchObject({ status: 400, outcome: 'not-sent' });
      expect(posts(world.sandbox)).toHaveLength(1);
      expect(await app.queue.status(jobId)).toMatchObject({
        state: 'failed',
        error: { name: 'EmailBadRequestError' },
      });
    } finally {
      await app.close();
    }
  });

  it('fails at boot naming each bad option', async () => {
    // EmailQueueModule alone (so not queueApp): its own option check is what fails the boot
    const boot = Test.createTestingModule({
      imports: [EmailQueueModule.forRoot({ queueName: 'a:b', concurrency: -1 } as never)],
    }).compile();
    const err = (await boot.catch((e: unknown) => e)) as EmailOptionsError;
    expect(err).toBeInstanceOf(EmailOptionsError);
    expect(err.problems.join('\n')).toMatch(/connection is required/);
    expect(err.problems.join('\n')).toMatch(/queueName/);
    expect(err.problems.join('\n')).toMatch(/concurrency/);
  });

  it('fails send with an error when Redis is down, never dropping the email silently', async () => {
    const app = await queueApp(world.sandbox, {
      connection: 'redis://127.0.0.1:1',
      queueName: freshQueueName(),
      worker: false,
      enqueueTimeoutMs: 500,
    });
    try {
      await expect(app.queue.send(mail(), { jobId: 'down-1' })).rejects.toThrow(/Redis/);
    } finally {
      await app.close();
    }
  });
});

describe('EmailQueueHealthIndicator', () => {
  it('is up with job counts on a live Redis, down with the reason on a dead one', async () => {
    const live = await queueApp(world.sandbox, {
      connection: world.redis.url,
      queueName: freshQueueName(),
      worker: false,
      allowVolatileRedis: true, // the spec's Redis keeps nothing on disk
    });
    const dead = await queueApp(world.sandbox, { connection: 'redis://127.0.0.1:1', worker: false });
    try {
      await live.queue.send(mail(), { jobId: 'counted-1' });
      const up = await live.moduleRef.get(EmailQueueHealthIndicator).isHealthy('q');
      expect(up.q).toMatchObject({ status: 'up', waiting: 1, active: 0, failed: 0 });
      expect(up.q).toHaveProperty('warnings', [expect.stringMatching(/appendonly/)]);
      const down = await dead.moduleRef.get(EmailQueueHealthIndicator).isHealthy('q', { timeoutMs: 300 });
      expect(down.q).toMatchObject({ status: 'down', reason: 'unreachable' });
    } finally {
      await Promise.all([live.close(), dead.close()]);
    }
  });
});

describe('idempotencyKeyFrom', () => {
  it('is valid, stable and injective on the parts', () => {
    const key = idempotencyKeyFrom('email', 'job-1');
    expect(key).toMatch(/^[-A-Za-z0-9_:]{16,128}$/);
    expect(idempotencyKeyFrom('email', 'job-1')).toBe(key);
    expect(idempotencyKeyFrom('email:job', '1')).not.toBe(idempotencyKeyFrom('email', 'job:1'));
    expect(idempotencyKeyFrom('a', 'b')).not.toBe(idempotencyKeyFrom('ab'));
  });
});

// Redis trouble: each test gets a private Redis it can freeze, kill and restart (useQueueWorld's is shared).
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { EmailModule } from '../../lib/index.js';
import { EmailQueueUnavailableError } from '../../lib/queue/index.js';
import { emailErrorToHttpException } from '../../lib/interceptors/email-error.helpers.js';
import { EmailQueueHealthIndicator, EmailQueueModule } from '../../lib/queue/index.js';
import { CapturingLogger } from '../support/capturing.logger.js';
import { startRedis, type TestRedis } from '../support/redis-server.mjs';
import { until } from './support/queue-processes.js';
import { freshQueueName, mail, queueApp, useQueueWorld } from './queue.support.js';

const world = useQueueWorld();
let redis: TestRedis | undefined;
afterEach(async () => {
  redis?.resume();
  await redis?.stop();
  redis = undefined;
});

/** Settles with the promise's outcome, or 'still running' after `ms` (a loose bound, not a timing assertion). */
function within<T>(promise: Promise<T>, ms: number): Promise<T | 'still running'> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<'still running'>((r) => (timer = setTimeout(() => r('still running'), ms))),
  ]).finally(() => clearTimeout(timer)); // no timer left to hold the worker after the file
}

describe('EmailQueue when Redis is in trouble', () => {
  it('Redis down at send: EmailQueueUnavailableError names the job id, 503, and the add is never replayed', async () => {
    redis = await startRedis({ aof: true });
    const app = await queueApp(world.sandbox, {
      connection: redis.url,
      queueName: freshQueueName(),
      worker: false,
      enqueueTimeoutMs: 500,
    });
    try {
      await app.queue.send(mail(), { jobId: 'before-1' });
      await redis.kill();
      const err = await within(
        app.queue.send(mail(), { jobId: 'down-2' }).catch((e: unknown) => e),
        8000,
      );
      expect(err).toBeInstanceOf(EmailQueueUnavailableError);
      expect(err).toMatchObject({ jobId: 'down-2', mayLand: false, outcome: 'not-sent', retryable: true });
      expect(emailErrorToHttpException(err)?.getStatus()).toBe(503);
      await redis.restart();
      await until(
        async () => (await app.queue.status('before-1').catch(() => null)) !== null,
        15_000,
        'reconnect',
      );
      await new Promise((r) => setTimeout(r, 500));
      expect(await app.queue.status('down-2')).toBeNull(); // not queued behind the caller's back
      await app.queue.send(mail(), { jobId: 'down-2' }); // the retry with the same id queues it once
      expect(await app.queue.status('down-2')).toMatchObject({ state: 'waiting' });
    } finally {
      await app.close();
    }
  });

  it('Redis frozen mid-add: the error says the job may land, and a retry with its id is still one email', async () => {
    redis = await startRedis({ aof: true });
    const queueName = freshQueueName();
    const app = await queueApp(world.sandbox, {
      connection: redis.url,
      queueName,
      worker: false,
      enqueueTimeoutMs: 500,
    });
    try {
      await app.queue.send(mail(), { jobId: 'warm-1' });
      redis.pause();
      const input = mail();
      const err = await within(
        app.queue.send(input, { jobId: 'frozen-1' }).catch((e: unknown) => e),
        8000,
      );
      expect(err).toBeInstanceOf(EmailQueueUnavailableError);
      expect(err).toMatchObject({ jobId: 'frozen-1', mayLand: true, outcome: 'uncertain' });
      redis.resume();
      await until(async () => (await app.queue.status('warm-1').catch(() => null)) !== null, 15_000, 'Redis');
      await app.queue.send(input, { jobId: 'frozen-1' });
      const worker = await queueApp(world.sandbox, { connection: redis.url, queueName });
      try {
        await worker.queue.waitFor('frozen-1', { timeoutMs: 10_000 });
        expect(world.sandbox.messages().filter((m) => m.subject === input.subject)).toHaveLength(1);
      } finally {
        await worker.close();
      }
    } finally {
      await app.close();
    }
  });

  it('app.close() returns with Redis gone (closeTimeoutMs bounds it)', async () => {
    redis = await startRedis();
    const app = await queueApp(world.sandbox, {
      connection: redis.url,
      queueName: freshQueueName(),
      closeTimeoutMs: 1500,
    });
    await app.queue.send(mail(), { jobId: 'c-1' });
    await app.queue.waitFor('c-1', { timeoutMs: 10_000 });
    await redis.kill();
    await new Promise((r) => setTimeout(r, 200));
    expect(
      await within(
        app.close().then(() => 'closed'),
        20_000,
      ),
    ).toBe('closed');
  });

  it('Redis restarted with AOF: every queued email is sent once after the restart', async () => {
    redis = await startRedis({ aof: true });
    const queueName = freshQueueName();
    const producer = await queueApp(world.sandbox, { connection: redis.url, queueName, worker: false });
    const inputs = Array.from({ length: 20 }, (_, i) => mail(`Receipt ${i}`));
    try {
      await producer.queue.sendMany(inputs.map((input, i) => ({ input, options: { jobId: `aof-${i}` } })));
      await redis.restart(); // SIGKILL, then the same port and data directory
      const worker = await queueApp(world.sandbox, { connection: redis.url, queueName });
      try {
        await Promise.all(inputs.map((_, i) => worker.queue.waitFor(`aof-${i}`, { timeoutMs: 15_000 })));
      } finally {
        await worker.close();
      }
      const subjects = world.sandbox.messages().map((m) => m.subject);
      expect(subjects.sort()).toEqual(inputs.map((i) => i.subject).sort());
    } finally {
      await producer.close();
    }
  });

  it('a Redis that would lose jobs: a boot warning naming the setting, and health down', async () => {
    redis = await startRedis(); // no AOF, no RDB
    // Built here rather than with queueApp: the logger must be in place before init() runs the boot check.
    const logger = new CapturingLogger();
    const moduleRef = await Test.createTestingModule({
      imports: [
        EmailModule.forRoot({ apiKey: world.sandbox.apiKey, baseUrl: world.sandbox.baseUrl, logger: false }),
        EmailQueueModule.forRoot({ connection: redis.url, queueName: freshQueueName(), worker: false }),
      ],
    }).compile();
    moduleRef.useLogger(logger);
    await moduleRef.init();
    try {
      await until(() => logger.messages.some((m) => /appendonly/.test(m)), 10_000, 'the boot warning');
      expect(logger.entries.find((e) => /appendonly/.test(e.message))?.level).toBe('warn');
      const health = await moduleRef.get(EmailQueueHealthIndicator).isHealthy('q');
      expect(health.q).toMatchObject({ status: 'down', reason: 'not-durable' });
      expect(JSON.stringify(health.q)).toMatch(/appendonly/);
    } finally {
      await moduleRef.close();
    }
  });

  it('an eviction policy other than noeviction is named too; AOF with noeviction is up', async () => {
    redis = await startRedis({ aof: true });
    const app = await queueApp(world.sandbox, {
      connection: redis.url,
      queueName: freshQueueName(),
      worker: false,
    });
    try {
      const indicator = app.moduleRef.get(EmailQueueHealthIndicator);
      expect((await indicator.isHealthy('q')).q).toMatchObject({ status: 'up' });
      const admin = new Redis(redis.url);
      await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
      admin.disconnect();
      const health = await indicator.isHealthy('q');
      expect(health.q).toMatchObject({ status: 'down', reason: 'not-durable' });
      expect(JSON.stringify(health.q)).toMatch(/maxmemory-policy.*noeviction/);
    } finally {
      await app.close();
    }
  });
});

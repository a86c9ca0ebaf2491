import { randomUUID } from 'node:crypto';
import { EmailBadRequestError, EmailSendUncertainError, type EmailLog } from '../../lib/index.js';
import { EmailJobConflictError } from '../../lib/queue/index.js';
import { RETRY_AFTER_CAP_MS } from '../../lib/policy/delivery.policy.js';
import { bullJobIdOf } from '../../lib/queue/bullmq.backend.js';
import { emailErrorToHttpException } from '../../lib/interceptors/email-error.helpers.js';
import { until } from './support/queue-processes.js';
import { freshQueueName, jobRecordOf, posts, queueApp, useQueueWorld } from './queue.support.js';

const world = useQueueWorld();

/** Look-alike mail: the same sender, recipient and subject every time, a body of its own. */
const lookAlike = (body = `Your code is ${randomUUID().slice(0, 6)}`) => ({
  from: 'shop@example.com',
  to: ['ada@example.com'],
  subject: 'Your login code',
  text: body,
});

/** The body of the sandbox message a record stands for. */
const bodyOf = (record: EmailLog) => world.sandbox.messages().find((m) => m.id === record.id)?.bodyText;

describe('EmailQueue: every job ends with its own outcome', () => {
  it('waitFor and status give typed records (dates as Date)', async () => {
    const app = await queueApp(world.sandbox, { connection: world.redis.url, queueName: freshQueueName() });
    try {
      await app.queue.send(lookAlike(), { jobId: 'typed-1' });
      const record = await app.queue.waitFor('typed-1', { timeoutMs: 10_000 });
      expect(record.createdAt).toBeInstanceOf(Date);
      expect(record.updatedAt).toBeInstanceOf(Date);
      const status = await app.queue.status('typed-1');
      expect(status?.record?.createdAt).toBeInstanceOf(Date);
      expect(status).toMatchObject({ state: 'sent', messageId: record.id });
    } finally {
      await app.close();
    }
  });

  it('an attempt after an uncertain one that gets 400 ends uncertain, never not-sent', async () => {
    const app = await queueApp(world.sandbox, { connection: world.redis.url, queueName: freshQueueName() });
    try {
      world.sandbox.faults.add({ route: 'POST /emails', mode: 'status', status: 500, times: 1 });
      // The sandbox answers 400 to a template it does not know: attempt 2 gets 400 after attempt 1's 500.
      const input = { from: 'shop@example.com', to: ['ada@example.com'], templateId: 99_999, variables: {} };
      const { jobId, idempotencyKey } = await app.queue.send(input, { jobId: 'late-400' });
      const err = await app.queue.waitFor(jobId, { timeoutMs: 10_000 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(EmailSendUncertainError);
      expect(err).not.toBeInstanceOf(EmailBadRequestError);
      expect(err).toMatchObject({ outcome: 'uncertain', idempotencyKey });
      expect(posts(world.sandbox).map((p) => p.status)).toEqual([500, 400]);
      expect(await app.queue.status(jobId)).toMatchObject({
        state: 'failed',
        error: { name: 'EmailSendUncertainError', outcome: 'uncertain' },
      });
    } finally {
      await app.close();
    }
  });

  it('a 429 with a huge Retry-After pauses the queue no longer than EmailService would wait', async () => {
    const app = await queueApp(world.sandbox, {
      connection: world.redis.url,
      queueName: freshQueueName(),
      closeTimeoutMs: 2000, // the job stays paused: close does not wait for it
    });
    const paused: number[] = [];
    app.queue.on('rateLimited', ({ retryAfterMs }) => paused.push(retryAfterMs));
    try {
      world.sandbox.faults.add({
        route: 'POST /emails',
        mode: 'status',
        status: 429,
        retryAfter: 31_536_000,
        times: 1,
      });
      await app.queue.send(lookAlike(), { jobId: 'year-1' });
      await until(() => paused.length === 1, 10_000, 'the 429');
      expect(paused).toEqual([RETRY_AFTER_CAP_MS]);
      const ttl = await app.queue.bullQueue.getRateLimitTtl();
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(RETRY_AFTER_CAP_MS);
    } finally {
      await app.close();
    }
  });

  it('after a 503 that created nothing, a look-alike sent meanwhile is never taken: the job sends its own', async () => {
    const app = await queueApp(world.sandbox, {
      connection: world.redis.url,
      queueName: freshQueueName(),
      backoff: { delayMs: 1500, maxDelayMs: 1500 },
    });
    try {
      world.sandbox.faults.add({ route: 'POST /emails', mode: 'status', status: 503, times: 1 });
      const mine = lookAlike();
      await app.queue.send(mine, { jobId: 'alike-503' });
      await until(() => posts(world.sandbox).length === 1, 10_000, 'the 503');
      await app.moduleRef.get((await import('../../lib/index.js')).EmailService).send(lookAlike());
      const record = await app.queue.waitFor('alike-503', { timeoutMs: 15_000 });
      expect(bodyOf(record)).toBe(mine.text);
      expect(world.sandbox.messages()).toHaveLength(2);
    } finally {
      await app.close();
    }
  });

  it('after a 429 the job is not "taken over": a look-alike sent during the pause is never taken', async () => {
    const app = await queueApp(world.sandbox, { connection: world.redis.url, queueName: freshQueueName() });
    try {
      world.sandbox.faults.add({
        route: 'POST /emails',
        mode: 'status',
        status: 429,
        retryAfter: 1,
        times: 1,
      });
      const mine = lookAlike();
      await app.queue.send(mine, { jobId: 'alike-429' });
      await until(() => posts(world.sandbox).length === 1, 10_000, 'the 429');
      await app.moduleRef.get((await import('../../lib/index.js')).EmailService).send(lookAlike());
      const record = await app.queue.waitFor('alike-429', { timeoutMs: 15_000 });
      expect(bodyOf(record)).toBe(mine.text);
      expect(world.sandbox.messages()).toHaveLength(2);
      expect(world.sandbox.requests().filter((r) => r.method === 'GET')).toHaveLength(0);
    } finally {
      await app.close();
    }
  });

  it('the same job id with another input is refused (409); with the same input it stays one job', async () => {
    const queueName = freshQueueName();
    const a = await queueApp(world.sandbox, { connection: world.redis.url, queueName, worker: false });
    const b = await queueApp(world.sandbox, { connection: world.redis.url, queueName, worker: false });
    try {
      const first = lookAlike('Order 7 has shipped');
      await a.queue.send(first, { jobId: 'order-7' });
      await b.queue.send({ ...first }, { jobId: 'order-7' }); // the same input from another process
      const err = await b.queue
        .send(lookAlike('Order 7 was cancelled'), { jobId: 'order-7' })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(EmailJobConflictError);
      expect(err).toMatchObject({ jobId: 'order-7', outcome: 'not-sent' });
      expect(emailErrorToHttpException(err)?.getStatus()).toBe(409);
      expect(await a.queue.bullQueue.count()).toBe(1);
      const job = await a.queue.bullQueue.getJob(bullJobIdOf('order-7'));
      expect(job?.data).toMatchObject({ jobId: 'order-7' });
      expect(job?.name).toBe('email: Your login code'); // what Bull Board shows
      // the job's record (what the worker sends) still holds the first input
      expect((await jobRecordOf(world.redis.url, queueName, 'order-7')).input).toMatchObject({
        text: 'Order 7 has shipped',
      });
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});

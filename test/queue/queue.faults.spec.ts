import { EmailSendUncertainError } from '../../lib/index.js';
import { until } from './support/queue-processes.js';
import { freshQueueName, mail, posts, queueApp, useQueueWorld } from './queue.support.js';

const world = useQueueWorld();

describe('EmailQueue worker under faults', () => {
  it("lost answers: the next attempt resends with the same key and gets the service's replay, one email", async () => {
    const app = await queueApp(world.sandbox, { connection: world.redis.url, queueName: freshQueueName() });
    try {
      world.sandbox.faults.add({ route: 'POST /emails', mode: 'drop-after', times: 1 });
      const { jobId, idempotencyKey } = await app.queue.send(mail(), { jobId: 'lost-1' });
      const record = await app.queue.waitFor(jobId, { timeoutMs: 10_000 });
      expect(world.sandbox.messages().map((m) => m.id)).toEqual([record.id]);
      const sent = posts(world.sandbox);
      expect(sent[0]).toEqual({ key: idempotencyKey, status: null, fault: 'drop-after' });
      expect(sent.slice(1).map((p) => p.key)).toEqual(sent.slice(1).map(() => idempotencyKey));
    } finally {
      await app.close();
    }
  });

  it('503s: retried with the same key until sent', async () => {
    const app = await queueApp(world.sandbox, { connection: world.redis.url, queueName: freshQueueName() });
    try {
      world.sandbox.faults.add({ route: 'POST /emails', mode: 'status', status: 503, times: 3 });
      const { jobId, idempotencyKey } = await app.queue.send(mail(), { jobId: 'busy-1' });
      await app.queue.waitFor(jobId, { timeoutMs: 10_000 });
      const sent = posts(world.sandbox);
      expect(sent.map((p) => p.status)).toEqual([503, 503, 503, 201]);
      expect(new Set(sent.map((p) => p.key))).toEqual(new Set([idempotencyKey]));
      expect(world.sandbox.messages()).toHaveLength(1);
      expect(await app.queue.status(jobId)).toMatchObject({ state: 'sent', attempts: 4 });
    } finally {
      await app.close();
    }
  });

  it('uncertain to the end: the job fails with EmailSendUncertainError and keeps its key', async () => {
    const app = await queueApp(world.sandbox, {
      connection: world.redis.url,
      queueName: freshQueueName(),
      attempts: 3,
    });
    try {
      world.sandbox.faults.add({ mode: 'status', status: 503, times: Infinity });
      const { jobId, idempotencyKey } = await app.queue.send(mail(), { jobId: 'unsure-1' });
      const err = await app.queue.waitFor(jobId, { timeoutMs: 10_000 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(EmailSendUncertainError);
      expect(err).toMatchObject({ idempotencyKey, outcome: 'uncertain' });
      expect(await app.queue.status(jobId)).toMatchObject({
        state: 'failed',
        idempotencyKey,
        attempts: 3,
        error: { name: 'EmailSendUncertainError', outcome: 'uncertain' },
      });
    } finally {
      world.sandbox.faults.clear();
      await app.close();
    }
  });

  it('429: the whole queue waits Retry-After (no POST from any worker), spending no attempt', async () => {
    const queueName = freshQueueName();
    const a = await queueApp(world.sandbox, { connection: world.redis.url, queueName });
    const b = await queueApp(world.sandbox, { connection: world.redis.url, queueName });
    try {
      world.sandbox.faults.add({
        route: 'POST /emails',
        mode: 'status',
        status: 429,
        retryAfter: 1,
        times: 1,
      });
      const first = await a.queue.send(mail(), { jobId: 'rl-0' });
      await until(() => posts(world.sandbox).length === 1, 5000, 'the 429');
      const limitedAt = Date.now();
      const more = await b.queue.sendMany(
        [1, 2, 3].map((n) => ({ input: mail(), options: { jobId: `rl-${n}` } })),
      );
      await Promise.all([first, ...more].map((q) => a.queue.waitFor(q.jobId, { timeoutMs: 10_000 })));
      const times = world.sandbox
        .requests()
        .filter((r) => r.method === 'POST')
        .map((r) => Date.parse(r.receivedAt));
      expect(times).toHaveLength(5);
      for (const t of times.slice(1)) expect(t - limitedAt).toBeGreaterThanOrEqual(900);
      expect(await a.queue.status('rl-0')).toMatchObject({ state: 'sent', attempts: 1 });
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('delayMs: nothing is sent before the delay', async () => {
    const app = await queueApp(world.sandbox, { connection: world.redis.url, queueName: freshQueueName() });
    try {
      const started = Date.now();
      const { jobId } = await app.queue.send(mail(), { jobId: 'later-1', delayMs: 700 });
      expect(await app.queue.status(jobId)).toMatchObject({ state: 'delayed' });
      await app.queue.waitFor(jobId, { timeoutMs: 10_000 });
      const [post] = world.sandbox.requests().filter((r) => r.method === 'POST');
      expect(Date.parse(post!.receivedAt) - started).toBeGreaterThanOrEqual(650);
    } finally {
      await app.close();
    }
  });

  it('graceful close: a job in flight finishes before the worker closes', async () => {
    const queueName = freshQueueName();
    const app = await queueApp(world.sandbox, { connection: world.redis.url, queueName });
    const watcher = await queueApp(world.sandbox, { connection: world.redis.url, queueName, worker: false });
    try {
      world.sandbox.faults.add({ route: 'POST /emails', mode: 'delay', ms: 600, at: 'after' });
      const { jobId } = await app.queue.send(mail(), { jobId: 'inflight-1' });
      await until(() => posts(world.sandbox).length === 1, 5000, 'the POST');
      await app.close();
      expect(await watcher.queue.status(jobId)).toMatchObject({ state: 'sent', attempts: 1 });
      expect(world.sandbox.messages()).toHaveLength(1);
    } finally {
      await watcher.close();
    }
  });
});

import { freshQueueName, posts, queueApp, useQueueWorld } from './queue.support.js';

/**
 * Issue 22 through the queue: jobs whose emails share sender, recipients and subject must each end
 * with the record of the message that carries their own body.
 */
const world = useQueueWorld();
const look = (code: string) => ({
  from: 'shop@example.com',
  to: ['ada@example.com'],
  subject: 'Your login code',
  text: `Your code is ${code}`,
});

async function bodyWithin(ms: number, check: () => boolean): Promise<void> {
  for (let waited = 0; waited < ms && !check(); waited += 10) await new Promise((r) => setTimeout(r, 10));
}

describe('EmailQueue and look-alike email', () => {
  it("a job whose first attempt got a 503 never completes with a look-alike job's record", async () => {
    const app = await queueApp(world.sandbox, {
      connection: world.redis.url,
      queueName: freshQueueName(),
      concurrency: 1,
      backoff: { delayMs: 400, maxDelayMs: 400 },
    });
    try {
      world.sandbox.faults.add({ route: 'POST /emails', mode: 'status', status: 503, times: 1 });
      const a = await app.queue.send(look('AAAA'), { jobId: 'look-a' });
      await bodyWithin(5_000, () => posts(world.sandbox).length === 1);
      const b = await app.queue.send(look('BBBB'), { jobId: 'look-b' });
      const recordB = await app.queue.waitFor(b.jobId, { timeoutMs: 10_000 });
      const recordA = await app.queue.waitFor(a.jobId, { timeoutMs: 10_000 });
      const body = (id: number) => world.sandbox.messages().find((m) => m.id === id)?.bodyText;
      expect(body(recordA.id)).toBe('Your code is AAAA');
      expect(body(recordB.id)).toBe('Your code is BBBB');
      expect(world.sandbox.messages()).toHaveLength(2);
    } finally {
      await app.close();
    }
  });

  it('a job re-queued after a 429 is not "taken over": it sends its own email, never a look-alike\'s', async () => {
    const app = await queueApp(world.sandbox, {
      connection: world.redis.url,
      queueName: freshQueueName(),
      concurrency: 2,
    });
    try {
      world.sandbox.faults.add({
        route: 'POST /emails',
        mode: 'status',
        status: 429,
        retryAfter: 1,
        times: 1,
      });
      // A look-up of the log, were one made, would read it only after the look-alike was sent.
      world.sandbox.faults.add({ route: 'GET /emails', mode: 'delay', ms: 400, times: 1 });
      const a = await app.queue.send(look('CCCC'), { jobId: 'look-c' });
      await bodyWithin(5_000, () => posts(world.sandbox).length === 1);
      const b = await app.queue.send(look('DDDD'), { jobId: 'look-d' });
      const [recordA, recordB] = await Promise.all([
        app.queue.waitFor(a.jobId, { timeoutMs: 15_000 }),
        app.queue.waitFor(b.jobId, { timeoutMs: 15_000 }),
      ]);
      const body = (id: number) => world.sandbox.messages().find((m) => m.id === id)?.bodyText;
      expect(body(recordA.id)).toBe('Your code is CCCC');
      expect(body(recordB.id)).toBe('Your code is DDDD');
      expect(world.sandbox.messages()).toHaveLength(2);
    } finally {
      await app.close();
    }
  });

  it('identical jobs (same input, other job ids) each send once, with lost answers on the way', async () => {
    const app = await queueApp(world.sandbox, {
      connection: world.redis.url,
      queueName: freshQueueName(),
      concurrency: 3,
    });
    try {
      world.sandbox.faults.add({ route: 'POST /emails', mode: 'drop-after', times: 2 });
      const jobs = await Promise.all(
        ['s1', 's2', 's3'].map((jobId) => app.queue.send(look('SAME'), { jobId })),
      );
      const records = await Promise.all(jobs.map((j) => app.queue.waitFor(j.jobId, { timeoutMs: 10_000 })));
      expect(new Set(records.map((r) => r.id)).size).toBe(3);
      expect(world.sandbox.messages()).toHaveLength(3);
    } finally {
      await app.close();
    }
  });
});

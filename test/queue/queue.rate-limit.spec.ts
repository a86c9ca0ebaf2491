import { EmailQueue, EmailQueueModule } from '../../lib/queue/index.js';
import { LATE_429S } from '../support/late-429s.js';
import { emailApp } from '../support/email-app.js';
import { startRedis, type TestRedis } from '../support/redis-server.mjs';
import { freshQueueName } from './queue.support.js';
import { useSandbox } from '../support/sandbox.js';

// The queue's workers send through EmailService, so they wait in the same rateLimit budget. Its own
// sandbox (with a quota) rather than useQueueWorld's, and its own app (rateLimit is an EmailModule option).
describe('EmailQueue workers under rateLimit', () => {
  let redis: TestRedis;
  const sandbox = useSandbox({ quota: { recipients: 3, windowMs: 1000 }, reset: true });

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  async function app() {
    const built = await emailApp({
      apiKey: sandbox.apiKey,
      baseUrl: sandbox.baseUrl,
      timeoutMs: 3000,
      rateLimit: { recipients: { limit: 3, intervalMs: 1000 }, redis: redis.url, prefix: freshQueueName() },
      imports: [
        EmailQueueModule.forRoot({
          connection: redis.url,
          queueName: freshQueueName(),
          concurrency: 5,
          backoff: { delayMs: 20, maxDelayMs: 100 },
        }),
      ],
    });
    return { queue: built.moduleRef.get(EmailQueue), close: built.close };
  }

  const to = (n: number) => Array.from({ length: n }, (_, i) => `u${i}@example.org`);

  it('jobs wait for the budget instead of drawing 429s from the quota', async () => {
    const { queue, close } = await app();
    try {
      const jobs = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          queue.send({
            from: 'shop@example.com',
            to: to(1 + (i % 2)),
            subject: `Job ${i}`,
            text: `job ${i}`,
          }),
        ),
      );
      await Promise.all(jobs.map((j) => queue.waitFor(j.jobId, { timeoutMs: 30_000 })));
      expect(sandbox.messages()).toHaveLength(6);
      // a job drawing a 429 waits for its Retry-After (no attempt spent); only a late one may come
      expect(sandbox.limited().quota).toBeLessThanOrEqual(LATE_429S);
    } finally {
      await close();
    }
  }, 60_000);

  it('a job larger than the whole budget fails at once, with no request', async () => {
    const { queue, close } = await app();
    try {
      const { jobId } = await queue.send({
        from: 'shop@example.com',
        to: to(4),
        subject: 'Big',
        text: 'big',
      });
      const err = await queue.waitFor(jobId, { timeoutMs: 10_000 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Error);
      expect(await queue.status(jobId)).toMatchObject({ state: 'failed', attempts: 1 });
      expect(sandbox.requests()).toHaveLength(0);
    } finally {
      await close();
    }
  });
});

import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import {
  EmailAbortError,
  EmailOptionsError,
  EmailRateLimitError,
  type EmailModuleOptions,
  type EmailService,
} from '../../lib/index.js';
import { EmailSandbox } from '../../lib/testing/index.js';
import { emailApp } from '../support/email-app.js';
import { LATE_429S } from '../support/late-429s.js';
import { startRedis } from '../support/redis-server.mjs';
import { useSandbox } from '../support/sandbox.js';

const mail = (i: number, to = 1) => ({
  from: 'shop@example.com',
  to: Array.from({ length: to }, (_, k) => `user${k}@example.org`),
  subject: 'Notice',
  text: `body ${i}`,
});

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** The boot error of an EmailModule with these options (undefined when it boots). */
async function bootError(options: Partial<EmailModuleOptions>): Promise<EmailOptionsError | undefined> {
  try {
    const app = await emailApp({ baseUrl: 'http://127.0.0.1:1', ...options });
    await app.close();
    return undefined;
  } catch (err) {
    if (err instanceof EmailOptionsError) return err;
    throw err;
  }
}

describe('rateLimit option: checked at boot', () => {
  it('names every bad budget field in one EmailOptionsError', async () => {
    const err = await bootError({
      timeoutMs: -1,
      rateLimit: {
        recipients: { limit: 0, intervalMs: 500 },
        requests: { limit: 2.5, intervalMs: -1000 },
        prefix: '',
        extra: 1,
      } as never,
    });
    expect(err?.problems).toEqual(
      expect.arrayContaining([
        'timeoutMs must be a positive number (got -1)',
        'unknown option rateLimit."extra"',
        'rateLimit.recipients.limit must be an integer of at least 1 (got 0)',
        'rateLimit.recipients.intervalMs must be an integer of at least 1000 (got 500)',
        'rateLimit.requests.limit must be an integer of at least 1 (got 2.5)',
        'rateLimit.requests.intervalMs must be an integer of at least 1000 (got -1000)',
        'rateLimit.prefix must be a non-empty string (got "")',
      ]),
    );
    expect(err?.problems).toHaveLength(7);
  });

  it('refuses a negative limit, a budget that is not an object, and a rateLimit with no budget', async () => {
    const neg = await bootError({ rateLimit: { recipients: { limit: -5, intervalMs: 1000 } } });
    expect(neg?.problems).toEqual(['rateLimit.recipients.limit must be an integer of at least 1 (got -5)']);
    const shape = await bootError({ rateLimit: { requests: 10 as never } });
    expect(shape?.problems).toEqual(['rateLimit.requests must be an object { limit, intervalMs }']);
    const none = await bootError({ rateLimit: {} });
    expect(none?.problems).toEqual([
      'rateLimit needs recipients or requests (or both): { limit, intervalMs }',
    ]);
  });

  it('refuses a redis that is not a URL without showing it (it may carry a password)', async () => {
    const err = await bootError({
      rateLimit: { requests: { limit: 1, intervalMs: 1000 }, redis: 'http://:hunter2@host' },
    });
    expect(err?.problems).toHaveLength(1);
    expect(err?.message).toContain('rateLimit.redis must be a redis:// or rediss:// URL');
    expect(err?.message).not.toContain('hunter2');
  });

  it('fails the boot when its Redis does not answer, naming the option and not the password', async () => {
    const port = await freePort();
    const err = await bootError({
      rateLimit: { requests: { limit: 1, intervalMs: 1000 }, redis: `redis://:hunter2@127.0.0.1:${port}` },
    });
    expect(err?.message).toContain('rateLimit.redis: cannot reach Redis');
    expect(err?.message).not.toContain('hunter2');
  });
});

describe('rateLimit option: in one process, against the sandbox', () => {
  const sandbox = useSandbox({ quota: { recipients: 6, windowMs: 1000 }, reset: true });
  const apps: Array<() => Promise<void>> = [];
  async function service(options: Partial<EmailModuleOptions>): Promise<EmailService> {
    const app = await emailApp({ baseUrl: sandbox.baseUrl, apiKey: sandbox.apiKey, ...options });
    apps.push(app.close);
    return app.email;
  }

  afterEach(async () => {
    while (apps.length) await apps.pop()!();
  });

  it('without it, a burst past the quota draws 429s from the service', async () => {
    const email = await service({ maxRetries: 0 });
    const results = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => email.send(mail(i))));
    expect(results.filter((r) => r.status === 'rejected').length).toBeGreaterThan(LATE_429S);
    expect(sandbox.limited().quota).toBeGreaterThan(LATE_429S);
  });

  it('with it, the same burst waits for its windows: every send goes, no 429 (but a late one)', async () => {
    const email = await service({
      timeoutMs: 60_000,
      rateLimit: { recipients: { limit: 6, intervalMs: 1000 } },
    });
    const results = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => email.send(mail(i))));
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    expect(sandbox.limited().quota).toBeLessThanOrEqual(LATE_429S);
    expect(sandbox.messages()).toHaveLength(12);
  });

  it('weighs a batch by its total recipients', async () => {
    const email = await service({
      maxRetries: 0,
      timeoutMs: 60_000,
      rateLimit: { recipients: { limit: 6, intervalMs: 1000 } },
    });
    // each batch is a whole window's budget: the second goes once the first window, anchored at the first
    // batch's answer, has ended, however late that answer came (so no 429 even on a loaded machine)
    await Promise.all([
      email.sendBatch([mail(1, 2), mail(2, 2), mail(3, 2)]),
      email.sendBatch([mail(4, 3), mail(5, 3)]),
    ]);
    expect(sandbox.limited().quota).toBe(0);
    expect(sandbox.messages()).toHaveLength(5);
  });

  it('a window whose first request reaches the service late: the next window waits past its answer, no 429', async () => {
    const email = await service({
      maxRetries: 0,
      timeoutMs: 60_000,
      rateLimit: { recipients: { limit: 6, intervalMs: 1000 } },
    });
    // the window's one request spends 400 ms on its way in (a slow first connection, a busy process):
    // the service's window opens that much after ours, and would still be full when ours ends
    sandbox.faults.add({ route: 'POST /emails', mode: 'delay', ms: 400, times: 1 });
    await Promise.all([email.send(mail(1, 6)), email.send(mail(2, 6))]);
    expect(sandbox.limited().quota).toBe(0);
    expect(sandbox.messages().map((m) => m.bodyText)).toEqual(['body 1', 'body 2']);
  });

  it('fails fast with a not-sent EmailRateLimitError when the wait would pass the deadline', async () => {
    const email = await service({ rateLimit: { recipients: { limit: 2, intervalMs: 60_000 } } });
    await email.send(mail(1, 2));
    const err = await email.send(mail(2), { timeoutMs: 2_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EmailRateLimitError);
    const limited = err as EmailRateLimitError;
    expect(limited.budget).toBe('recipients');
    expect(limited.outcome).toBe('not-sent');
    expect(limited.retryable).toBe(true);
    expect(limited.retryAfterMs).toBeGreaterThan(2_000);
    expect(limited.message).toContain('rateLimit recipients budget');
    expect(sandbox.requests()).toHaveLength(1); // the refused send made no request
  });

  it('refuses at once, not retryable, a send with more recipients than the whole budget', async () => {
    const email = await service({ rateLimit: { recipients: { limit: 2, intervalMs: 1000 } } });
    const err = (await email.send(mail(1, 3)).catch((e: unknown) => e)) as EmailRateLimitError;
    expect(err).toBeInstanceOf(EmailRateLimitError);
    expect(err.retryable).toBe(false);
    expect(err.retryAfterMs).toBeUndefined();
    expect(err.message).toBe(
      'POST /emails not made: it alone is larger than the whole rateLimit recipients budget (it needs 3, ' +
        'the whole budget is 2), so it can never be made: split it (sendMany sends a list of any size in parts that fit)',
    );
    expect(err.message).not.toMatch(/deadline/);
    expect(sandbox.requests()).toHaveLength(0);
  });

  it('counts every request, reads included, in the requests budget', async () => {
    const email = await service({ rateLimit: { requests: { limit: 2, intervalMs: 60_000 } } });
    await email.list();
    await email.send(mail(1));
    const err = (await email.list({ timeoutMs: 1_000 }).catch((e: unknown) => e)) as EmailRateLimitError;
    expect(err).toBeInstanceOf(EmailRateLimitError);
    expect(err.budget).toBe('requests');
    expect(err.outcome).toBeUndefined(); // a read has no outcome
    expect(sandbox.requests()).toHaveLength(2);
  });

  it("stops waiting when the caller's signal aborts: not sent, no request", async () => {
    const email = await service({ rateLimit: { recipients: { limit: 1, intervalMs: 10_000 } } });
    await email.send(mail(1));
    const controller = new AbortController();
    const pending = email.send(mail(2), { signal: controller.signal }).catch((e: unknown) => e);
    setTimeout(() => controller.abort(), 50);
    const err = (await pending) as EmailAbortError;
    expect(err).toBeInstanceOf(EmailAbortError);
    expect(err.outcome).toBe('not-sent');
    expect(sandbox.requests()).toHaveLength(1);
  });

  it('after a 429 from the service, the next request waits for its Retry-After', async () => {
    const email = await service({ rateLimit: { requests: { limit: 100, intervalMs: 1000 } } });
    sandbox.faults.add({ route: 'POST /emails', mode: 'status', status: 429, retryAfter: 2, times: 1 });
    await email.send(mail(1));
    await email.send(mail(2));
    const times = sandbox.requests().map((r) => Date.parse(r.receivedAt));
    expect(sandbox.requests()[0].status).toBe(429);
    expect(times[1] - times[0]).toBeGreaterThanOrEqual(1_500); // blocked for 2 s (a lower bound only)
    expect(times[2] - times[0]).toBeGreaterThanOrEqual(1_500);
  });
});

describe('rateLimit option: shared through Redis', () => {
  it("a 429's pause outlasts the answer of a window's first request that was on its way meanwhile", async () => {
    const redis = await startRedis();
    const sandbox = await EmailSandbox.start();
    const app = await emailApp({
      baseUrl: sandbox.baseUrl,
      apiKey: sandbox.apiKey,
      maxRetries: 0,
      rateLimit: { recipients: { limit: 6, intervalMs: 1000 }, redis: redis.url, prefix: 'pause-kept' },
    });
    const watcher = new Redis(redis.url);
    try {
      // the window's first request (A) is answered 2 s after it is processed; the next one (B) draws a 429
      // with a 30 s Retry-After, which pauses the budget (its key in Redis) for every process
      sandbox.faults.add({ route: 'POST /emails', mode: 'status', status: 429, retryAfter: 30, skip: 1 });
      const slow = sandbox.faults.add({ route: 'POST /emails', mode: 'delay', ms: 2_000, at: 'after' });
      const a = app.email.send(mail(1));
      while (slow.hits === 0) await new Promise((r) => setTimeout(r, 10));
      await expect(app.email.send(mail(2))).rejects.toBeInstanceOf(EmailRateLimitError);
      await a;
      // A's answer re-anchors the window it opened (1 s from then): that must not cut the pause short
      expect(await watcher.pttl('pause-kept:recipients:all')).toBeGreaterThan(5_000);
    } finally {
      watcher.disconnect();
      await app.close();
      await sandbox.close();
      await redis.stop();
    }
  }, 30_000);
});

describe('rateLimit option: when its Redis goes away while running', () => {
  it('goes on counting in this process (the insurance limiter), with the same numbers', async () => {
    const redis = await startRedis();
    // own sandbox: this test stops its Redis mid-run, so it owns both
    const sandbox = await EmailSandbox.start();
    const app = await emailApp({
      baseUrl: sandbox.baseUrl,
      apiKey: sandbox.apiKey,
      rateLimit: { recipients: { limit: 2, intervalMs: 60_000 }, redis: redis.url, prefix: 'lost-redis' },
    });
    try {
      await app.email.send(mail(1));
      await redis.stop();
      await app.email.send(mail(2)); // counted in-process now: the insurance limiter's own window
      await app.email.send(mail(3));
      const err = (await app.email
        .send(mail(4), { timeoutMs: 1_000 })
        .catch((e: unknown) => e)) as EmailRateLimitError;
      expect(err).toBeInstanceOf(EmailRateLimitError);
      expect(err.budget).toBe('recipients');
      expect(sandbox.messages()).toHaveLength(3);
    } finally {
      await app.close();
      await sandbox.close();
      await redis.stop();
    }
  });
});

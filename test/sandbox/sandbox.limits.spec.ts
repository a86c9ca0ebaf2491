import { EmailSandbox } from '../../lib/testing/index.js';
import { inline, RawClient } from './sandbox.client.js';
import { useSandbox } from '../support/sandbox.js';

const to = (n: number) => Array.from({ length: n }, (_, i) => `u${i}@example.org`);

describe('EmailSandbox quotas', () => {
  const sandbox = useSandbox({
    quota: { recipients: 10, windowMs: 60_000 },
    clock: { frozen: true },
    reset: true,
  });
  const client = new RawClient(() => sandbox);

  afterAll(async () => {
    await client.close();
  });

  it('counts recipients, not messages, and answers 429 with Retry-After past the quota', async () => {
    expect((await client.send(inline({ to: to(6) }))).status).toBe(201);
    expect((await client.send(inline({ to: to(4) }))).status).toBe(201);
    sandbox.clock.advance(15_000);
    const over = await client.send(inline({ to: to(1) }));
    expect(over.status).toBe(429);
    expect(typeof over.json.error).toBe('string');
    expect(over.headers['retry-after']).toBe('45');
    expect(sandbox.messages()).toHaveLength(2);
  });

  it('counts every recipient of a batch and rejects a batch that would pass the quota', async () => {
    const res = await client.call('POST', '/emails/batch', {
      body: [inline({ to: to(6) }), inline({ to: to(5) })],
    });
    expect(res.status).toBe(429);
    expect(sandbox.messages()).toHaveLength(0);
  });

  it('counts the 429s its quota answered in limited() and in /__sandbox/stats, apart from injected faults', async () => {
    expect((await client.send(inline({ to: to(10) }))).status).toBe(201);
    expect((await client.send(inline())).status).toBe(429);
    sandbox.faults.add({ route: 'POST /emails', mode: 'status', status: 429, times: 1 });
    expect((await client.send(inline())).status).toBe(429);
    expect(sandbox.limited()).toEqual({ quota: 1, rate: 0 });
    const stats = await client.call('GET', '/__sandbox/stats', { key: null });
    expect((stats.json as { limited: unknown }).limited).toEqual({ quota: 1, rate: 0 });
    sandbox.reset();
    expect(sandbox.limited()).toEqual({ quota: 0, rate: 0 });
  });

  it('opens a new window once the old one ends', async () => {
    expect((await client.send(inline({ to: to(10) }))).status).toBe(201);
    expect((await client.send(inline())).status).toBe(429);
    sandbox.clock.advance(60_000);
    expect((await client.send(inline())).status).toBe(201);
  });

  it('does not count a repeat of an idempotent send', async () => {
    const key = 'quota-test-key-0001';
    await client.send(inline({ to: to(10) }), { idempotencyKey: key });
    const again = await client.send(inline({ to: to(10) }), { idempotencyKey: key });
    expect(again.status).toBe(201);
  });
});

describe('EmailSandbox request rate limit', () => {
  it('answers 429 with Retry-After past the request rate, on every route', async () => {
    // own sandbox: options unlike the shared one (useSandbox starts one per describe)
    const sandbox = await EmailSandbox.start({
      rateLimit: { requests: 3, windowMs: 2000 },
      clock: { frozen: true },
    });
    const client = new RawClient(() => sandbox);
    try {
      for (let i = 0; i < 3; i++) expect((await client.call('GET', '/emails')).status).toBe(200);
      const limited = await client.send(inline());
      expect(limited.status).toBe(429);
      expect(limited.headers['retry-after']).toBe('2');
      expect((await client.call('GET', '/emails/1')).status).toBe(429);
      sandbox.clock.advance(2000);
      expect((await client.send(inline())).status).toBe(201);
    } finally {
      await client.close();
      await sandbox.close();
    }
  });
});

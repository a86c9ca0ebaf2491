/**
 * The sample app, started as `main.ts` starts it (embedded sandbox, `createSampleApp`), listening on
 * 127.0.0.1 and driven over real HTTP: every endpoint, the DTO validation, the error interceptor,
 * the health check and the notification jobs, including one that hits an ambiguous fault.
 */
import type { INestApplication } from '@nestjs/common';
import { Redis } from 'ioredis';
import type { AddressInfo } from 'node:net';
import { checkRedisDurability } from '../../lib/queue/redis-durability.policy.js';
import type { EmailSandbox } from 'nestjs-transactional-email/testing';
import { createSampleApp } from '../../sample/src/app.setup.js';
import { startLocalRedis, type LocalRedis } from '../../sample/src/redis/local-redis.js';
import { startLocalSandbox } from '../../sample/src/sandbox/local-sandbox.js';
import { httpClient, waitFor } from './sample.http.js';

const ENV = {
  NOTIFICATION_RETRY_MS: '100',
  NOTIFICATION_MAX_ATTEMPTS: '50',
  EMAIL_MAX_RETRIES: '1',
};
const saved = { ...process.env };

let app: INestApplication;
let sandbox: EmailSandbox;
let redis: LocalRedis | null;
let call: ReturnType<typeof httpClient>;

const FROM = 'Shop <shop@example.com>';
const inline = (to: string, extra: Record<string, unknown> = {}) => ({
  from: FROM,
  to: [to],
  subject: 'Your order',
  html: '<p>Thanks! <a href="https://example.com/orders/1">See your order</a></p>',
  text: 'Thanks!',
  ...extra,
});
const to = (address: string) => sandbox.messages().filter((m) => m.toAddresses.includes(address));

beforeAll(async () => {
  delete process.env.EMAIL_BASE_URL;
  delete process.env.EMAIL_API_KEY;
  delete process.env.REDIS_URL;
  Object.assign(process.env, ENV);
  redis = await startLocalRedis();
  if (!redis) throw new Error('the sample should start an embedded redis-server without REDIS_URL');
  const started = await startLocalSandbox();
  if (!started) throw new Error('the sample should start an embedded sandbox without EMAIL_BASE_URL');
  sandbox = started;
  app = await createSampleApp({ sandbox, logger: false });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  call = httpClient(`http://127.0.0.1:${port}`);
});

afterAll(async () => {
  await app?.close(); // a no-op when the shutdown test has closed it already
  await redis?.stop();
  process.env = saved;
});

describe('embedded sandbox', () => {
  it('is what EMAIL_BASE_URL and EMAIL_API_KEY point at', () => {
    expect(process.env.EMAIL_BASE_URL).toBe(sandbox.baseUrl);
    expect(process.env.EMAIL_API_KEY).toBe(sandbox.apiKey);
    expect(sandbox.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });
});

describe('embedded redis-server', () => {
  it('keeps queued jobs as a production Redis should: the queue finds nothing to warn about', async () => {
    const client = new Redis(redis!.url, { lazyConnect: true });
    try {
      await client.connect();
      expect(await client.config('GET', 'appendonly')).toEqual(['appendonly', 'yes']);
      expect(await checkRedisDurability(client)).toEqual({ problems: [] });
    } finally {
      client.disconnect();
    }
  });
});

describe('POST /emails', () => {
  it('sends an inline email and answers 201 with the record', async () => {
    const res = await call('POST', '/emails', inline('ada@example.com'));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      toAddresses: ['ada@example.com'],
      subject: 'Your order',
      status: 'sent',
    });
    expect(to('ada@example.com')).toHaveLength(1);
  });

  it("passes the client's Idempotency-Key on: the same request twice gives one message", async () => {
    const headers = { 'idempotency-key': 'order-1001-confirmation' };
    const first = await call('POST', '/emails', inline('grace@example.com'), headers);
    const second = await call('POST', '/emails', inline('grace@example.com'), headers);
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.body.id).toBe(first.body.id);
    expect(to('grace@example.com')).toHaveLength(1);
  });

  it.each([
    ['an unsupported field', { cc: ['x@example.com'] }, {}, /cc/],
    ['a field no DTO declares', { priority: 'high' }, {}, /priority/],
    ['no recipient', { to: [] }, {}, /to/],
    ['a bad Idempotency-Key', {}, { 'idempotency-key': 'short' }, /idempotency/i],
  ])('answers 400 to %s and sends nothing', async (_what, extra, headers, message) => {
    const before = sandbox.messages().length;
    const res = await call('POST', '/emails', inline('bad@example.com', extra), headers);
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toMatch(message);
    expect(sandbox.messages()).toHaveLength(before);
  });

  it('maps a refusal by the service to an HTTP answer through the interceptor (403 -> 502, no secret)', async () => {
    const res = await call('POST', '/emails', inline('ada@example.com', { from: 'someone@unverified.test' }));
    expect(res.status).toBe(502);
    expect(JSON.stringify(res.body)).not.toContain(sandbox.apiKey);
  });

  it('answers 502 naming the key when the outcome stays unknown; a retry with that key sends nothing new', async () => {
    const drop = sandbox.faults.add({ route: 'POST /emails', mode: 'drop-after', times: Infinity });
    const blind = sandbox.faults.add({ route: 'GET /emails', mode: 'status', status: 503, times: Infinity });
    const headers = { 'idempotency-key': 'checkout-7-receipt-mail' };
    const res = await call('POST', '/emails', inline('uma@example.com'), headers);
    drop.remove();
    blind.remove();
    expect(res.status).toBe(502);
    expect(JSON.stringify(res.body)).toMatch(/uncertain/i);
    expect(JSON.stringify(res.body)).toContain('checkout-7-receipt-mail');
    expect(to('uma@example.com')).toHaveLength(1);
    const retry = await call('POST', '/emails', inline('uma@example.com'), headers);
    expect(retry.status).toBe(201);
    expect(to('uma@example.com').map((m) => m.id)).toEqual([retry.body.id]);
  });
});

describe('POST /emails/template', () => {
  it('sends from a saved template', async () => {
    const res = await call('POST', '/emails/template', {
      from: FROM,
      to: ['linus@example.com'],
      templateId: 1,
      variables: { name: 'Linus' },
    });
    expect(res.status).toBe(201);
    expect(res.body.subject).toBe('Welcome, Linus');
    expect(to('linus@example.com')[0]?.bodyText).toContain('Hello Linus');
  });

  it('answers 400 without a templateId, and 400 when the service rejects the variables', async () => {
    expect((await call('POST', '/emails/template', inline('x@example.com'))).status).toBe(400);
    const wrong = { from: FROM, to: ['x@example.com'], templateId: 1, variables: { nickname: 'X' } };
    expect((await call('POST', '/emails/template', wrong)).status).toBe(400);
    expect(to('x@example.com')).toHaveLength(0);
  });
});

describe('POST /emails/batch', () => {
  it('sends several emails in one request', async () => {
    const res = await call('POST', '/emails/batch', [inline('b1@example.com'), inline('b2@example.com')]);
    expect(res.status).toBe(201);
    expect(res.body.map((r: { toAddresses: string[] }) => r.toAddresses[0])).toEqual([
      'b1@example.com',
      'b2@example.com',
    ]);
  });

  it('answers 400 to an item the batch cannot carry, and sends nothing', async () => {
    const scheduled = inline('b3@example.com', {
      scheduledAt: new Date(Date.now() + 3600_000).toISOString(),
    });
    const res = await call('POST', '/emails/batch', [inline('b4@example.com'), scheduled]);
    expect(res.status).toBe(400);
    expect([...to('b3@example.com'), ...to('b4@example.com')]).toHaveLength(0);
  });
});

describe('GET /emails and GET /emails/:id', () => {
  it('lists message records, at most `limit`', async () => {
    const res = await call('GET', '/emails?limit=2');
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(2);
    expect((await call('GET', '/emails?limit=500')).status).toBe(400);
  });

  it('reads one message with its bodies and its events (a real open through the tracking pixel)', async () => {
    const sent = await call('POST', '/emails', inline('tracked@example.com'));
    const before = await call('GET', `/emails/${sent.body.id}`);
    expect(before.status).toBe(200);
    expect(before.body).toMatchObject({ id: sent.body.id, bodyText: 'Thanks!', events: [] });
    const pixel = /src="([^"]+open\.gif)"/.exec(before.body.html as string)?.[1];
    expect(pixel).toBeDefined();
    expect((await fetch(pixel!)).status).toBe(200);
    const after = await call('GET', `/emails/${sent.body.id}`);
    expect(after.body.openCount).toBe(1);
    expect(after.body.events).toEqual([expect.objectContaining({ type: 'open', url: null })]);
  });

  it('answers 404 for a message that does not exist', async () => {
    expect((await call('GET', '/emails/987654')).status).toBe(404);
  });
});

describe('GET /health', () => {
  it('is up while the service answers', async () => {
    const res = await call('GET', '/health');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ok', info: { email: { status: 'up' } } });
  });

  it('is 503 with a reason while the service fails', async () => {
    const fault = sandbox.faults.add({ route: 'GET /emails', mode: 'status', status: 503, times: 1 });
    const res = await call('GET', '/health');
    expect(fault.hits).toBe(1);
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({
      status: 'error',
      error: { email: { status: 'down', reason: 'unavailable' } },
    });
  });
});

describe('notification jobs', () => {
  const job = (id: string) => call('GET', `/notifications/jobs/${id}`);
  const settled = (id: string, statuses: string[], timeoutMs?: number) =>
    waitFor(
      async () => {
        const res = await job(id);
        return statuses.includes(res.body.state) ? res.body : undefined;
      },
      `job ${id} to be ${statuses.join(' or ')}`,
      timeoutMs,
    );
  const keysSentFor = (address: string) =>
    sandbox
      .requests()
      .filter(
        (r) =>
          r.method === 'POST' && r.path === '/emails' && (r.json as { to?: string[] })?.to?.[0] === address,
      )
      .map((r) => r.headers['idempotency-key']);

  it('queues a job on EmailQueue that its worker sends with a key derived from the job id', async () => {
    const queued = await call('POST', '/notifications/jobs', { to: 'kim@example.com', name: 'Kim' });
    expect(queued.status).toBe(202);
    expect(queued.body.idempotencyKey).toMatch(/^nteq_[0-9a-f]{64}$/);
    const done = await settled(queued.body.id, ['sent', 'failed']);
    expect(done).toMatchObject({ state: 'sent', attempts: 1 });
    expect(to('kim@example.com').map((m) => m.id)).toEqual([done.messageId]);
    expect(keysSentFor('kim@example.com')).toEqual([queued.body.idempotencyKey]);
    expect((await call('GET', '/notifications/jobs')).body.map((j: { jobId: string }) => j.jobId)).toContain(
      queued.body.id,
    );
  });

  it('hits an ambiguous fault, retries with the same key, and ends with exactly one message', async () => {
    // Every send is processed and then its connection dropped; every look-up in the log fails.
    const drop = sandbox.faults.add({ route: 'POST /emails', mode: 'drop-after', times: Infinity });
    const blind = sandbox.faults.add({ route: 'GET /emails', mode: 'status', status: 503, times: Infinity });
    const queued = await call('POST', '/notifications/jobs', { to: 'lin@example.com', name: 'Lin' });
    await waitFor(
      async () => ((await job(queued.body.id)).body.attempts >= 2 ? true : undefined),
      'two uncertain attempts',
      30_000,
    );
    expect(to('lin@example.com')).toHaveLength(1); // created by the first attempt, answer lost

    drop.remove();
    blind.remove();
    const done = await settled(queued.body.id, ['sent', 'failed']);
    expect(done).toMatchObject({ state: 'sent' });
    const messages = to('lin@example.com');
    expect(messages.map((m) => m.id)).toEqual([done.messageId]);
    const keys = keysSentFor('lin@example.com');
    expect(keys.length).toBeGreaterThan(0);
    expect(new Set(keys)).toEqual(new Set([queued.body.idempotencyKey]));
  }, 40_000);

  it('answers 400 to a bad job and 404 to an unknown one', async () => {
    expect((await call('POST', '/notifications/jobs', { to: 'not an address', name: 'X' })).status).toBe(400);
    expect((await call('POST', '/notifications/jobs', { to: 'x@example.com' })).status).toBe(400);
    expect((await job('00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await job('nope')).status).toBe(400);
  });
});

describe('/sandbox (embedded sandbox only)', () => {
  it('scripts a lost answer over HTTP: the send is retried with the same key, not looked up, not repeated', async () => {
    const fault = await call('POST', '/sandbox/faults', { route: 'POST /emails', mode: 'drop-after' });
    expect(fault.status).toBe(201);
    expect(fault.body).toEqual({ route: 'POST /emails', times: 1, mode: 'drop-after' });
    const res = await call('POST', '/emails', inline('noor@example.com'));
    expect(res.status).toBe(201);
    expect(to('noor@example.com').map((m) => m.id)).toEqual([res.body.id]);
    const [dropped, retried] = sandbox.requests().slice(-2);
    expect([dropped.fault, retried.status]).toEqual(['drop-after', 201]);
    expect(retried.headers['idempotency-key']).toBe(dropped.headers['idempotency-key']);
    expect((await call('GET', '/sandbox/requests?last=2')).body).toBe(
      'POST /emails -> drop-after\nPOST /emails -> 201\n',
    );
    const state = await call('GET', '/sandbox');
    expect(state.body.faultsInjected).toMatchObject({ 'drop-after': expect.any(Number) });
    expect(state.body.messages.length).toBe(sandbox.messages().length);
  });

  it('clears faults, and refuses a fault it does not know', async () => {
    await call('POST', '/sandbox/faults', { route: 'GET /emails', mode: 'status', status: 503, times: 50 });
    expect((await call('DELETE', '/sandbox/faults')).status).toBe(204);
    expect((await call('GET', '/emails?limit=1')).status).toBe(200);
    expect((await call('POST', '/sandbox/faults', { mode: 'explode' })).status).toBe(400);
  });
});

describe('shutdown', () => {
  it('stops the app and closes the embedded sandbox with it', async () => {
    await app.close();
    await expect(fetch(`${sandbox.baseUrl}/emails`)).rejects.toThrow();
  });
});

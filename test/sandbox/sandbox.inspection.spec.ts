import { types } from 'node:util';
import { request } from 'undici';
import { EmailSandbox } from '../../lib/testing/index.js';
import { inline, RawClient } from './sandbox.client.js';
import { useSandbox } from '../support/sandbox.js';

describe('EmailSandbox inspection', () => {
  const sandbox = useSandbox({ maxRequestLog: 5, reset: true });
  const client = new RawClient(() => sandbox);

  afterAll(async () => {
    await client.close();
  });

  it('messages() returns every record with bodies, oldest first, as copies', async () => {
    await client.send(inline({ subject: 'one' }));
    await client.send(inline({ subject: 'two', html: null }));
    const held = sandbox.messages();
    expect(held.map((m) => [m.id, m.subject, m.html])).toEqual([
      [1, 'one', '<p>Thanks!</p>'],
      [2, 'two', null],
    ]);
    held[0].toAddresses.push('mutated@example.org');
    held[0].subject = 'mutated';
    expect(sandbox.message(1)?.subject).toBe('one');
    expect(sandbox.message(1)?.toAddresses).toEqual(['ada@example.org']);
    expect(sandbox.message(99)).toBeUndefined();
  });

  it('requests() keeps method, path, masked headers, raw body and parsed JSON', async () => {
    const body = JSON.stringify(inline());
    await client.send(body, { idempotencyKey: 'inspect-key-000001' });
    await client.call('GET', '/emails?limit=2');
    const [post, get] = sandbox.requests();
    expect(post).toMatchObject({
      method: 'POST',
      path: '/emails',
      body,
      json: inline(),
      status: 201,
      fault: null,
    });
    expect(post.headers.authorization).toBe('Bearer ***');
    expect(post.headers['idempotency-key']).toBe('inspect-key-000001');
    expect(JSON.stringify(sandbox.requests())).not.toContain(sandbox.apiKey);
    expect(get).toMatchObject({
      method: 'GET',
      path: '/emails?limit=2',
      body: '',
      json: undefined,
      status: 200,
    });
  });

  it('keeps only the last maxRequestLog requests', async () => {
    for (let i = 0; i < 8; i++) await client.call('GET', `/emails?limit=${i + 1}`);
    expect(sandbox.requests().map((r) => r.path)).toEqual([4, 5, 6, 7, 8].map((n) => `/emails?limit=${n}`));
  });

  it('reset() forgets messages, requests and faults; ids start again at 1', async () => {
    await client.send(inline());
    sandbox.faults.add({ mode: 'status', status: 503, times: Infinity });
    sandbox.reset();
    expect(sandbox.messages()).toEqual([]);
    expect(sandbox.requests()).toEqual([]);
    expect(sandbox.faults.injected).toBe(0);
    expect((await client.send(inline())).json.id).toBe(1);
  });

  it('setStatus() changes a record as a test needs (e.g. bounced)', async () => {
    const { json } = await client.send(inline());
    sandbox.setStatus(json.id, 'bounced', 'mailbox does not exist');
    const res = await client.call('GET', `/emails/${json.id}`);
    expect(res.json).toMatchObject({ status: 'bounced', errorMessage: 'mailbox does not exist' });
  });

  it('answers 400 for a body over maxBodyBytes', async () => {
    // own sandboxes below: each test starts one with the limit it is about
    const small = await EmailSandbox.start({ maxBodyBytes: 1000 });
    const c = new RawClient(() => small);
    try {
      const res = await c.send(inline({ html: 'x'.repeat(2000) }));
      expect(res.status).toBe(400);
      expect(res.json.error).toMatch(/larger/);
    } finally {
      await c.close();
      await small.close();
    }
  });
});

describe('EmailSandbox options and lifecycle', () => {
  it('serves every route under basePath', async () => {
    const sandbox = await EmailSandbox.start({ basePath: '/api/v0', tracking: { opens: true } });
    const client = new RawClient(() => sandbox);
    try {
      expect(sandbox.baseUrl).toMatch(/\/api\/v0$/);
      const sent = await client.send(inline());
      expect(sent.status).toBe(201);
      const html = (await client.call('GET', `/emails/${sent.json.id}`)).json.html as string;
      const pixel = /src="([^"]+)"/.exec(html)![1];
      expect(pixel.startsWith(`${sandbox.baseUrl}/__sandbox/track/`)).toBe(true);
      expect((await request(pixel, { dispatcher: client.agent })).statusCode).toBe(200);
      const outside = await request(sandbox.baseUrl.replace('/api/v0', '/emails'), {
        dispatcher: client.agent,
      });
      expect(outside.statusCode).toBe(404);
      await outside.body.dump();
    } finally {
      await client.close();
      await sandbox.close();
    }
  });

  it('serves /__sandbox/stats and /__sandbox/reset without auth', async () => {
    const sandbox = await EmailSandbox.start();
    const client = new RawClient(() => sandbox);
    try {
      await client.send(inline());
      const stats = await client.call('GET', '/__sandbox/stats', { key: null });
      expect(stats.json).toEqual({
        messages: 1,
        faults: 0,
        faultsByMode: {},
        limited: { quota: 0, rate: 0 },
      });
      expect((await client.call('POST', '/__sandbox/reset', { key: null })).status).toBe(204);
      expect(sandbox.messages()).toHaveLength(0);
    } finally {
      await client.close();
      await sandbox.close();
    }
  });

  it('forgets the oldest messages past maxMessages', async () => {
    const sandbox = await EmailSandbox.start({ maxMessages: 10 });
    const client = new RawClient(() => sandbox);
    try {
      for (let i = 0; i < 12; i++) await client.send(inline());
      const ids = sandbox.messages().map((m) => m.id);
      expect(ids.length).toBeLessThanOrEqual(10);
      expect(ids.at(-1)).toBe(12);
      expect((await client.call('GET', '/emails/1')).status).toBe(404);
    } finally {
      await client.close();
      await sandbox.close();
    }
  });

  it('close() ends hanging requests and frees the port; a second close() is harmless', async () => {
    const sandbox = await EmailSandbox.start();
    const client = new RawClient(() => sandbox);
    sandbox.faults.add({ mode: 'hang' });
    const pending = client.call('GET', '/emails').catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 50));
    await sandbox.close();
    await sandbox.close();
    expect(types.isNativeError(await pending)).toBe(true); // undici's errors may come from another realm
    const err = await request(`${sandbox.baseUrl}/emails`).catch((e: unknown) => e);
    expect((err as any).code ?? (err as any).cause?.code).toBe('ECONNREFUSED');
    await client.close();
  });

  it('rejects bad options at start', async () => {
    await expect(EmailSandbox.start({ keys: [''] })).rejects.toThrow(TypeError);
    await expect(EmailSandbox.start({ basePath: 'api' })).rejects.toThrow(/basePath/);
    await expect(EmailSandbox.start({ quota: { recipients: 1, windowMs: 0 } })).rejects.toThrow(/windowMs/);
  });
});

import { EmailSandbox } from '../../lib/testing/index.js';
import { inline, RawClient } from './sandbox.client.js';
import { useSandbox } from '../support/sandbox.js';

describe('EmailSandbox authentication and permissions', () => {
  const sandbox = useSandbox({
    keys: [
      'sk_test_growth_key_0001',
      { key: 'sk_test_free_key_00001', plan: 'free', domains: ['free.test'] },
      { key: 'sk_test_revoked_key_01', revoked: true },
    ],
    reset: true,
  });
  const client = new RawClient(() => sandbox);

  afterAll(async () => {
    await client.close();
  });

  it('uses the first key as apiKey and listens on 127.0.0.1', () => {
    expect(sandbox.apiKey).toBe('sk_test_growth_key_0001');
    expect(sandbox.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it.each([
    ['no Authorization header', null, undefined],
    ['an unknown key', 'sk_test_nobody', undefined],
    ['a revoked key', 'sk_test_revoked_key_01', undefined],
    ['a non-bearer scheme', null, { authorization: 'Basic c2tfdGVzdDp4' }],
  ])('answers 401 with {error} for %s, on every route', async (_name, key, headers) => {
    for (const [method, path] of [
      ['GET', '/emails'],
      ['POST', '/emails'],
      ['POST', '/emails/batch'],
      ['GET', '/emails/1'],
      ['GET', '/emails/1/events'],
    ]) {
      const res = await client.call(method, path, {
        key,
        headers,
        body: method === 'POST' ? inline() : undefined,
      });
      expect(res.status).toBe(401);
      expect(typeof res.json.error).toBe('string');
    }
    expect(sandbox.messages()).toHaveLength(0);
  });

  it('accepts the bearer scheme case-insensitively', async () => {
    const res = await client.call('GET', '/emails', {
      key: null,
      headers: { authorization: `bearer ${sandbox.apiKey}` },
    });
    expect(res.status).toBe(200);
  });

  it('answers 403 when the sender domain is not verified for the key', async () => {
    const res = await client.send(inline({ from: 'x@elsewhere.org' }));
    expect(res.status).toBe(403);
    expect(res.json.error).toMatch(/elsewhere\.org/);
    const other = await client.send(inline({ from: 'x@example.com' }), { key: 'sk_test_free_key_00001' });
    expect(other.status).toBe(403);
    expect(sandbox.messages()).toHaveLength(0);
  });

  it('does not accept subdomains of a verified domain by default', async () => {
    expect((await client.send(inline({ from: 'x@mail.example.com' }))).status).toBe(403);
  });

  it('answers 403 for scheduling on the free plan, and sends the same email unscheduled', async () => {
    const key = 'sk_test_free_key_00001';
    const scheduledAt = new Date(Date.now() + 3_600_000).toISOString();
    const res = await client.send(inline({ from: 'a@free.test', scheduledAt }), { key });
    expect(res.status).toBe(403);
    expect(res.json.error).toMatch(/plan/i);
    const ok = await client.send(inline({ from: 'a@free.test' }), { key });
    expect(ok.status).toBe(201);
  });

  it('answers 403 for a batch item from an unverified domain, creating nothing', async () => {
    const res = await client.call('POST', '/emails/batch', {
      body: [inline(), inline({ from: 'a@evil.test' })],
    });
    expect(res.status).toBe(403);
    expect(res.json.error).toMatch(/^\[1\]\./);
    expect(sandbox.messages()).toHaveLength(0);
  });
});

describe('EmailSandbox allowSubdomains option', () => {
  it('accepts subdomains when asked to', async () => {
    // own sandbox: options unlike the shared one (useSandbox starts one per describe)
    const sandbox = await EmailSandbox.start({ domains: ['example.com'], allowSubdomains: true });
    const client = new RawClient(() => sandbox);
    try {
      expect((await client.send(inline({ from: 'a@mail.example.com' }))).status).toBe(201);
      expect((await client.send(inline({ from: 'a@notexample.com' }))).status).toBe(403);
    } finally {
      await client.close();
      await sandbox.close();
    }
  });
});

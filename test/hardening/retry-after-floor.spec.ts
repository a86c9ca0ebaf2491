import { EmailRateLimitError } from '../../lib/index.js';
import { emailApp } from '../support/email-app.js';
import { emailDetailJson } from '../support/records.fixture.js';
import { json, startScriptedServer, type ScriptedServer } from '../support/scripted-server.js';

// Attacks the backoff with a Retry-After that asks for an immediate retry: negative, tiny, zero, or a
// date in the past. The normal backoff (250 ms ceiling for the first retry) is the floor.

const RETRY_AFTER = {
  negative: '-5',
  tiny: '0.0001',
  zero: '0',
  'a past HTTP date': new Date(Date.now() - 3_600_000).toUTCString(),
};

describe('Retry-After has the backoff as its floor (defect 5)', () => {
  let server: ScriptedServer;
  let app: Awaited<ReturnType<typeof emailApp>>;
  let seen: number[] = [];

  beforeAll(async () => {
    server = await startScriptedServer();
    app = await emailApp({ baseUrl: server.url, maxRetries: 1, timeoutMs: 5_000 });
  });
  afterAll(async () => {
    await app.close();
    await server.close();
  });

  for (const [name, value] of Object.entries(RETRY_AFTER)) {
    it(`Retry-After ${name} (${value}) waits at least the backoff before the retry`, async () => {
      seen = [];
      const before = server.requests.length;
      server.handle((_req, res) => {
        seen.push(performance.now());
        if (seen.length === 1) json(res, 429, { error: 'slow down' }, { 'retry-after': value });
        else json(res, 200, emailDetailJson());
      });
      await app.email.get(1);
      expect(server.requests.length).toBe(before + 2);
      expect(seen[1] - seen[0]).toBeGreaterThanOrEqual(240);
    });
  }

  it('a Retry-After longer than the backoff is still obeyed as given', async () => {
    seen = [];
    server.handle((_req, res) => {
      seen.push(performance.now());
      if (seen.length === 1) json(res, 429, { error: 'slow down' }, { 'retry-after': '0.6' });
      else json(res, 200, emailDetailJson());
    });
    await app.email.get(1);
    expect(seen[1] - seen[0]).toBeGreaterThanOrEqual(590);
  });

  it('with no retries left the 429 reaches the caller after one request', async () => {
    const before = server.requests.length;
    server.handle((_req, res) => json(res, 429, { error: 'slow down' }, { 'retry-after': '-5' }));
    await expect(app.email.get(1, { maxRetries: 0 })).rejects.toBeInstanceOf(EmailRateLimitError);
    expect(server.requests.length).toBe(before + 1);
  });
});

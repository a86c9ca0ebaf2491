import { EmailRateLimitError } from '../../lib/index.js';
import { useScriptedEmailApp } from '../support/email-app.js';
import { emailDetailJson } from '../support/records.fixture.js';
import { json } from '../support/scripted-server.js';

// Attacks the backoff with a Retry-After that asks for an immediate retry: negative, tiny, zero, or a
// date in the past. The normal backoff (250 ms ceiling for the first retry) is the floor.

const RETRY_AFTER = {
  negative: '-5',
  tiny: '0.0001',
  zero: '0',
  'a past HTTP date': new Date(Date.now() - 3_600_000).toUTCString(),
};

describe('Retry-After has the backoff as its floor (defect 5)', () => {
  const app = useScriptedEmailApp({ scope: 'all', maxRetries: 1, timeoutMs: 5_000 });
  let seen: number[] = [];

  for (const [name, value] of Object.entries(RETRY_AFTER)) {
    it(`Retry-After ${name} (${value}) waits at least the backoff before the retry`, async () => {
      seen = [];
      const before = app.server.requests.length;
      app.server.handle((_req, res) => {
        seen.push(performance.now());
        if (seen.length === 1) json(res, 429, { error: 'slow down' }, { 'retry-after': value });
        else json(res, 200, emailDetailJson());
      });
      await app.email.get(1);
      expect(app.server.requests.length).toBe(before + 2);
      expect(seen[1] - seen[0]).toBeGreaterThanOrEqual(240);
    });
  }

  it('a Retry-After longer than the backoff is still obeyed as given', async () => {
    seen = [];
    app.server.handle((_req, res) => {
      seen.push(performance.now());
      if (seen.length === 1) json(res, 429, { error: 'slow down' }, { 'retry-after': '0.6' });
      else json(res, 200, emailDetailJson());
    });
    await app.email.get(1);
    expect(seen[1] - seen[0]).toBeGreaterThanOrEqual(590);
  });

  it('with no retries left the 429 reaches the caller after one request', async () => {
    const before = app.server.requests.length;
    app.server.handle((_req, res) => json(res, 429, { error: 'slow down' }, { 'retry-after': '-5' }));
    await expect(app.email.get(1, { maxRetries: 0 })).rejects.toBeInstanceOf(EmailRateLimitError);
    expect(app.server.requests.length).toBe(before + 1);
  });
});

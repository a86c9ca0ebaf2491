import { EmailRateLimitError } from '../../lib/index.js';
import { retryAfterSeconds } from '../../lib/interceptors/email-error.helpers.js';
import { useScriptedEmailApp } from '../support/email-app.js';
import { json } from '../support/scripted-server.js';

/**
 * Issue 36: a 429 whose Retry-After asks for a year. The module waits at most 60 s (its rate-limit
 * pause, the queue's, the interceptor's Retry-After), so the error's `retryAfterMs` says 60 s, the
 * service's own ask is kept beside it, and the call is not retried.
 */
const YEAR_S = 365 * 24 * 3600;

describe('retryAfterMs is the wait applied, at most 60 s (issue 36)', () => {
  const app = useScriptedEmailApp({ scope: 'all', maxRetries: 2, timeoutMs: 120_000 });

  async function rateLimited(retryAfter: string): Promise<EmailRateLimitError> {
    app.server.handle((_req, res) =>
      json(res, 429, { error: 'quota exceeded' }, { 'retry-after': retryAfter }),
    );
    const before = app.server.requests.length;
    const error = await app.email
      .send({ from: 'app@example.com', to: ['ada@example.com'], subject: 'Hi', text: 'x' })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(EmailRateLimitError);
    expect(app.server.requests.length - before).toBe(1); // more than the cap: not retried
    return error as EmailRateLimitError;
  }

  it.each([
    ['seconds', String(YEAR_S)],
    ['an HTTP date', new Date(Date.now() + YEAR_S * 1000).toUTCString()],
  ])(
    'a Retry-After of a year in %s: retryAfterMs 60000, the ask kept in requestedRetryAfterMs',
    async (_, value) => {
      const err = await rateLimited(value);
      expect(err.retryAfterMs).toBe(60_000);
      expect(err.requestedRetryAfterMs).toBeGreaterThan(YEAR_S * 1000 - 60_000);
      expect(retryAfterSeconds(err)).toBe(60); // what the interceptor tells the app's own clients
      expect(err.toJSON()).toMatchObject({
        retryAfterMs: 60_000,
        requestedRetryAfterMs: err.requestedRetryAfterMs,
      });
    },
  );

  it('a Retry-After within the cap is the wait as given, with nothing beside it', async () => {
    app.server.handle((_req, res) => json(res, 429, { error: 'slow down' }, { 'retry-after': '7' }));
    const err = await app.email.get(1, { maxRetries: 0 }).then(
      () => undefined,
      (e: unknown) => e as EmailRateLimitError,
    );
    expect(err?.retryAfterMs).toBe(7_000);
    expect(err?.requestedRetryAfterMs).toBeUndefined();
  });
});

import {
  EmailAbortError,
  EmailBadRequestError,
  EmailNotFoundError,
  EmailRateLimitError,
  EmailUnavailableError,
} from '../../lib/index.js';
import { useScriptedEmailApp } from '../support/email-app.js';
import { emailLogJson } from '../support/records.fixture.js';
import { json, type ScriptedServer } from '../support/scripted-server.js';
import { failure } from './delivery.support.js';

/** Answers the scripted statuses in order (then 200 with one record); `'reset'` breaks the connection. */
function statuses(
  server: ScriptedServer,
  steps: Array<number | 'reset'>,
  headers: Record<string, string> = {},
) {
  let n = 0;
  server.handle((req, res) => {
    const step = steps[n++];
    if (step === 'reset') return void req.socket.destroy();
    if (step === undefined) return json(res, 200, [emailLogJson()]);
    json(res, step, { error: `scripted ${step}` }, step === 429 ? headers : {});
  });
}

describe('reads: retried on connection errors, timeouts, 429, 500, 502, 503', () => {
  const app = useScriptedEmailApp({ maxRetries: 3, timeoutMs: 10_000 });

  it.each([500, 502, 503, 429])('status %i, then success: two requests', async (status) => {
    statuses(app.server, [status], { 'retry-after': '0' });
    const records = await app.email.list();
    expect(records).toHaveLength(1);
    expect(app.server.requests).toHaveLength(2);
  });

  it('a reset connection is retried, for get and listEvents too', async () => {
    statuses(app.server, ['reset', 'reset']);
    expect(await app.email.list()).toHaveLength(1);
    expect(app.server.requests).toHaveLength(3);
    app.server.handle((req, res) => {
      if (app.server.requests.length === 4) return void req.socket.destroy();
      json(res, 200, req.url.endsWith('/events') ? [] : { ...emailLogJson(), html: null, bodyText: 'x' });
    });
    expect((await app.email.get(1)).bodyText).toBe('x');
    expect(app.server.requests).toHaveLength(5);
    expect(await app.email.listEvents(1)).toEqual([]);
    expect(app.server.requests).toHaveLength(6);
  });

  it('stops after maxRetries and throws the last failure', async () => {
    statuses(app.server, [503, 503, 503, 503, 503]);
    const err = await failure(app.email.list());
    expect(err).toBeInstanceOf(EmailUnavailableError);
    expect(app.server.requests).toHaveLength(4); // 1 + maxRetries 3
  });

  it('a per-call maxRetries wins over the module option', async () => {
    statuses(app.server, [500, 500, 500]);
    await failure(app.email.list({ maxRetries: 1 }));
    expect(app.server.requests).toHaveLength(2);
    app.server.requests.length = 0;
    statuses(app.server, [500]);
    await failure(app.email.list({ maxRetries: 0 }));
    expect(app.server.requests).toHaveLength(1);
  });

  it.each([
    [400, EmailBadRequestError],
    [404, EmailNotFoundError],
  ])('status %i is not retried', async (status, type) => {
    statuses(app.server, [status]);
    expect(await failure(app.email.listEvents(5))).toBeInstanceOf(type);
    expect(app.server.requests).toHaveLength(1);
  });

  it('obeys Retry-After', async () => {
    // half a second: above the first backoff's 250 ms ceiling, so only Retry-After explains the wait
    statuses(app.server, [429], { 'retry-after': '0.5' });
    const started = Date.now();
    await app.email.list();
    expect(Date.now() - started).toBeGreaterThanOrEqual(450);
    expect(app.server.requests).toHaveLength(2);
  });

  it('a Retry-After beyond the deadline fails at once with the 429 instead of sleeping', async () => {
    statuses(app.server, [429], { 'retry-after': '30' });
    const started = Date.now();
    const err = (await failure(app.email.list({ timeoutMs: 15_000 }))) as EmailRateLimitError;
    // sleeping to the deadline would take 15 s: 10 s of slack for a busy machine
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(err).toBeInstanceOf(EmailRateLimitError);
    expect(err.retryAfterMs).toBe(30_000);
    expect(app.server.requests).toHaveLength(1);
  });

  it('a Retry-After beyond the 60 s cap is not waited for, whatever the deadline', async () => {
    statuses(app.server, [429], { 'retry-after': '120' }); // waiting even the cap would outlast the test
    expect(await failure(app.email.list({ timeoutMs: 600_000 }))).toBeInstanceOf(EmailRateLimitError);
    expect(app.server.requests).toHaveLength(1);
  });

  it('the caller abort cuts a backoff sleep short', async () => {
    // a 30 s sleep outlasts the test's timeout: ending at all means the abort cut it short
    statuses(app.server, [429], { 'retry-after': '30' });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('shutting down')), 150);
    const started = Date.now();
    const options = { signal: controller.signal, timeoutMs: 60_000 };
    const err = (await failure(app.email.list(options))) as EmailAbortError;
    expect(err).toBeInstanceOf(EmailAbortError);
    expect(err.outcome).toBeUndefined();
    expect((err.cause as Error).message).toBe('shutting down');
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(app.server.requests).toHaveLength(1);
  });

  it('the deadline bounds the whole call, retries included', async () => {
    // never answers: the first attempt eats the whole budget, and ending at all means the deadline ended it
    app.server.handle(() => undefined);
    await failure(app.email.list({ timeoutMs: 400 }));
    expect(app.server.requests).toHaveLength(1);
  });
});

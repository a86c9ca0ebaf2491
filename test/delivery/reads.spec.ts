import {
  EmailAbortError,
  EmailBadRequestError,
  EmailNotFoundError,
  EmailRateLimitError,
  EmailUnavailableError,
  type EmailService,
} from '../../lib/index.js';
import { emailApp } from '../support/email-app.js';
import { emailLogJson } from '../support/records.fixture.js';
import { json, startScriptedServer, type ScriptedServer } from '../support/scripted-server.js';
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
  let server: ScriptedServer;
  let email: EmailService;
  let close: () => Promise<void>;
  beforeEach(async () => {
    server = await startScriptedServer();
    ({ email, close } = await emailApp({ baseUrl: server.url, maxRetries: 3, timeoutMs: 10_000 }));
  });
  afterEach(async () => {
    await close();
    await server.close();
  });

  it.each([500, 502, 503, 429])('status %i, then success: two requests', async (status) => {
    statuses(server, [status], { 'retry-after': '0' });
    const records = await email.list();
    expect(records).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
  });

  it('a reset connection is retried, for get and listEvents too', async () => {
    statuses(server, ['reset', 'reset']);
    expect(await email.list()).toHaveLength(1);
    expect(server.requests).toHaveLength(3);
    server.handle((req, res) => {
      if (server.requests.length === 4) return void req.socket.destroy();
      json(res, 200, req.url.endsWith('/events') ? [] : { ...emailLogJson(), html: null, bodyText: 'x' });
    });
    expect((await email.get(1)).bodyText).toBe('x');
    expect(server.requests).toHaveLength(5);
    expect(await email.listEvents(1)).toEqual([]);
    expect(server.requests).toHaveLength(6);
  });

  it('stops after maxRetries and throws the last failure', async () => {
    statuses(server, [503, 503, 503, 503, 503]);
    const err = await failure(email.list());
    expect(err).toBeInstanceOf(EmailUnavailableError);
    expect(server.requests).toHaveLength(4); // 1 + maxRetries 3
  });

  it('a per-call maxRetries wins over the module option', async () => {
    statuses(server, [500, 500, 500]);
    await failure(email.list({ maxRetries: 1 }));
    expect(server.requests).toHaveLength(2);
    server.requests.length = 0;
    statuses(server, [500]);
    await failure(email.list({ maxRetries: 0 }));
    expect(server.requests).toHaveLength(1);
  });

  it.each([
    [400, EmailBadRequestError],
    [404, EmailNotFoundError],
  ])('status %i is not retried', async (status, type) => {
    statuses(server, [status]);
    expect(await failure(email.listEvents(5))).toBeInstanceOf(type);
    expect(server.requests).toHaveLength(1);
  });

  it('obeys Retry-After', async () => {
    statuses(server, [429], { 'retry-after': '1' });
    const started = Date.now();
    await email.list();
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(server.requests).toHaveLength(2);
  });

  it('a Retry-After beyond the deadline fails at once with the 429 instead of sleeping', async () => {
    statuses(server, [429], { 'retry-after': '5' });
    const started = Date.now();
    const err = (await failure(email.list({ timeoutMs: 1500 }))) as EmailRateLimitError;
    expect(Date.now() - started).toBeLessThan(500);
    expect(err).toBeInstanceOf(EmailRateLimitError);
    expect(err.retryAfterMs).toBe(5000);
    expect(server.requests).toHaveLength(1);
  });

  it('a Retry-After beyond the 60 s cap is not waited for, whatever the deadline', async () => {
    statuses(server, [429], { 'retry-after': '120' });
    const started = Date.now();
    expect(await failure(email.list({ timeoutMs: 600_000 }))).toBeInstanceOf(EmailRateLimitError);
    expect(Date.now() - started).toBeLessThan(500);
    expect(server.requests).toHaveLength(1);
  });

  it('the caller abort cuts a backoff sleep short', async () => {
    statuses(server, [429], { 'retry-after': '5' });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('shutting down')), 150);
    const started = Date.now();
    const err = (await failure(email.list({ signal: controller.signal }))) as EmailAbortError;
    const took = Date.now() - started;
    expect(err).toBeInstanceOf(EmailAbortError);
    expect(err.outcome).toBeUndefined();
    expect((err.cause as Error).message).toBe('shutting down');
    expect(took).toBeGreaterThanOrEqual(140);
    expect(took).toBeLessThan(1000);
    expect(server.requests).toHaveLength(1);
  });

  it('the deadline bounds the whole call, retries included', async () => {
    server.handle(() => undefined); // never answers: the first attempt eats the whole budget
    const started = Date.now();
    await failure(email.list({ timeoutMs: 400 }));
    expect(Date.now() - started).toBeLessThan(1200);
    expect(server.requests).toHaveLength(1);
  });
});

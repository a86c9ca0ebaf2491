import {
  EmailAbortError,
  EmailBadRequestError,
  EmailConflictError,
  EmailProviderError,
  EmailRateLimitError,
  EmailSendUncertainError,
  EmailTimeoutError,
  EmailUnavailableError,
} from '../../lib/index.js';
import { DeliveryObserver, type AttemptEvent } from '../../lib/telemetry/delivery.telemetry.js';
import { emailApp, useScriptedEmailApp } from '../support/email-app.js';
import { startScriptedServer, type ScriptedServer } from '../support/scripted-server.js';
import { failure, input, recordFor, script } from './delivery.support.js';

const LIST = 'GET /emails?limit=100';
const POST = 'POST /emails';

describe('single sends: same key, same body, reconciliation', () => {
  const app = useScriptedEmailApp({ timeoutMs: 10_000 });

  function expectSameKeyAndBody(posts: Array<{ headers: Record<string, unknown>; body: string }>): void {
    const key = posts[0].headers['idempotency-key'];
    expect(key).toMatch(/^[-A-Za-z0-9_:]{16,128}$/);
    for (const post of posts) {
      expect(post.headers['idempotency-key']).toBe(key);
      expect(post.body).toBe(posts[0].body);
    }
  }

  it('the happy path makes one request and no look-up', async () => {
    const seen = script(app.server, [201]);
    const record = await app.email.send(input);
    expect(record.id).toBe(100);
    expect(seen.order()).toEqual([POST]);
    expect(seen.posts()[0].headers['idempotency-key']).toMatch(/^nte_[0-9a-f-]{36}$/);
  });

  it.each([500, 502, 503])(
    'after %i: retried with the same key and body, no look-up while a retry can settle it',
    async (status) => {
      const seen = script(app.server, [status, 201]);
      const record = await app.email.send(input);
      expect(record.id).toBe(100);
      expect(seen.order()).toEqual([POST, POST]);
      expectSameKeyAndBody(seen.posts());
    },
  );

  it('with no retry left, a record proven its own in the log ends the call without another send', async () => {
    const seen = script(app.server, [500], () => [recordFor(41, { subject: 'Other' }), recordFor(42)]);
    const record = await app.email.send(input, { maxRetries: 0 });
    expect(record.id).toBe(42);
    expect(seen.order()).toEqual([POST, LIST, 'GET /emails/42']);
  });

  it('a connection reset after sending, with no retry left, is reconciled the same way', async () => {
    const seen = script(app.server, ['reset'], () => [recordFor(7)]);
    expect((await app.email.send(input, { maxRetries: 0 })).id).toBe(7);
    expect(seen.order()).toEqual([POST, LIST, 'GET /emails/7']);
  });

  it('a look-alike with another body is never taken, even as the last resort', async () => {
    const seen = script(app.server, [500], () => [recordFor(7, { bodyText: 'Another body' })]);
    const err = (await failure(app.email.send(input, { maxRetries: 0 }))) as EmailSendUncertainError;
    expect(err).toBeInstanceOf(EmailSendUncertainError);
    expect(seen.order()).toEqual([POST, LIST, 'GET /emails/7']);
  });

  it('records that do not match (subject, recipients, sender, older than the call) are not taken', async () => {
    const old = new Date(Date.now() - 60_000).toISOString();
    const seen = script(app.server, [503, 201], () => [
      recordFor(1, { subject: 'Order 2' }),
      recordFor(2, { toAddresses: ['ada@example.com', 'bob@example.com'] }),
      recordFor(3, { fromAddress: 'other@example.com' }),
      recordFor(4, { createdAt: old }),
    ]);
    expect((await app.email.send(input, { maxRetries: 1 })).id).toBe(100);
    expect(seen.order()).toEqual([POST, POST]);
  });

  it('429 is not-sent: retried with the same key, Retry-After obeyed, no look-up', async () => {
    // half a second: above the first backoff's 250 ms ceiling, so only Retry-After explains the wait
    const seen = script(app.server, [{ status: 429, headers: { 'retry-after': '0.5' } }, 201]);
    const started = Date.now();
    expect((await app.email.send(input)).id).toBe(100);
    expect(Date.now() - started).toBeGreaterThanOrEqual(450);
    expect(seen.order()).toEqual([POST, POST]);
    expectSameKeyAndBody(seen.posts());
  });

  it('400 ends the call at once, not-sent', async () => {
    const seen = script(app.server, [400]);
    const err = (await failure(app.email.send(input))) as EmailBadRequestError;
    expect(err).toBeInstanceOf(EmailBadRequestError);
    expect(err.outcome).toBe('not-sent');
    expect(seen.order()).toEqual([POST]);
  });

  it('still unknown when retries run out: EmailSendUncertainError with the key and the cause', async () => {
    const seen = script(app.server, [503]);
    const err = (await failure(
      app.email.send(input, { idempotencyKey: 'order-1:confirmation' }),
    )) as EmailSendUncertainError;
    expect(err).toBeInstanceOf(EmailSendUncertainError);
    expect(err.idempotencyKey).toBe('order-1:confirmation');
    expect(err.attempts).toBe(3);
    expect(err.outcome).toBe('uncertain');
    expect(err.cause).toBeInstanceOf(EmailUnavailableError);
    expect(seen.order()).toEqual([POST, POST, POST, LIST]); // looked up once, when no retry was left
    expect(seen.posts().map((p) => p.headers['idempotency-key'])).toEqual(
      Array(3).fill('order-1:confirmation'),
    );
    expectSameKeyAndBody(seen.posts());
  });

  it('a not-sent failure after an uncertain one never reports not-sent', async () => {
    const seen = script(app.server, [503, { status: 429, headers: { 'retry-after': '0' } }]);
    const err = (await failure(app.email.send(input, { maxRetries: 1 }))) as EmailSendUncertainError;
    expect(err).toBeInstanceOf(EmailSendUncertainError);
    expect(err.outcome).toBe('uncertain');
    expect(err.cause).toBeInstanceOf(EmailRateLimitError);
    // looked up once, before giving up
    expect(seen.order()).toEqual([POST, POST, LIST]);
  });

  it('409 after an uncertain attempt means "still pending": retried with the same key', async () => {
    const seen = script(app.server, [503, 409, 201]);
    expect((await app.email.send(input)).id).toBe(100);
    expect(seen.order()).toEqual([POST, POST, POST]);
    expectSameKeyAndBody(seen.posts());
  });

  it('409 on the first attempt means the key belongs to another request: EmailConflictError, no retry', async () => {
    const seen = script(app.server, [409, 201]);
    const err = (await failure(
      app.email.send(input, { idempotencyKey: 'job-42-welcome-mail' }),
    )) as EmailConflictError;
    expect(err).toBeInstanceOf(EmailConflictError);
    expect(err.outcome).toBe('uncertain');
    expect(seen.order()).toEqual([POST, LIST]);
  });

  it('409 on the first attempt with a key made for this call can only mean "pending": retried with it', async () => {
    const seen = script(app.server, [409, 201]);
    expect((await app.email.send(input)).id).toBe(100);
    expect(seen.order()).toEqual([POST, POST]);
    expectSameKeyAndBody(seen.posts());
  });

  it('409 on the first attempt whose message is in the log returns it (an earlier run of the same job)', async () => {
    const seen = script(app.server, [409], () => [recordFor(9)]);
    expect((await app.email.send(input, { idempotencyKey: 'job-42-welcome-mail' })).id).toBe(9);
    expect(seen.order()).toEqual([POST, LIST, 'GET /emails/9']);
  });

  it('a failing look-up does not make things worse: the call ends uncertain with its key', async () => {
    let gets = 0;
    app.server.handle((req, res) => {
      if (req.method === 'GET') {
        gets++;
        res.writeHead(503, { 'content-type': 'application/json' });
        res.end('{"error":"busy"}');
        return;
      }
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'x' }));
    });
    const err = (await failure(app.email.send(input, { maxRetries: 1 }))) as EmailSendUncertainError;
    expect(err).toBeInstanceOf(EmailSendUncertainError);
    expect(gets).toBe(2); // the look-up itself retried once
    expect(app.server.requests.filter((r) => r.method === 'POST')).toHaveLength(2);
  });

  it('the caller abort during the backoff after an uncertain attempt is never not-sent', async () => {
    script(app.server, [503]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 40);
    // 50 retries with growing backoff outlast the test's timeout: ending at all means the abort cut them
    const pending = app.email.send(input, { signal: controller.signal, maxRetries: 50 });
    const err = (await failure(pending)) as EmailAbortError;
    expect(err).toBeInstanceOf(EmailAbortError);
    expect(err.outcome).toBe('uncertain');
  });

  it('a 429 asking for more than the remaining deadline fails at once, not-sent', async () => {
    const seen = script(app.server, [{ status: 429, headers: { 'retry-after': '30' } }]);
    const started = Date.now();
    const err = (await failure(app.email.send(input, { timeoutMs: 15_000 }))) as EmailRateLimitError;
    expect(err).toBeInstanceOf(EmailRateLimitError);
    expect(err.outcome).toBe('not-sent');
    // sleeping to the deadline would take 15 s: 10 s of slack for a busy machine
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(seen.order()).toEqual([POST]);
  });

  it('the deadline passing during an attempt leaves no time to look up: uncertain, with the key', async () => {
    const seen = script(app.server, ['hang']); // never answers: ending at all means the deadline ended it
    const err = (await failure(app.email.send(input, { timeoutMs: 300 }))) as EmailSendUncertainError;
    expect(err).toBeInstanceOf(EmailSendUncertainError);
    expect(err.cause).toBeInstanceOf(EmailTimeoutError);
    expect(err.attempts).toBe(1);
    expect(seen.order()).toEqual([POST]);
  });

  it('concurrent identical sends never take a look-alike, nor the same record', async () => {
    let posts = 0;
    const seven = recordFor(7); // one record, as the log would show it to both look-ups
    app.server.handle((req, res) => {
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(req.url.endsWith('/7') ? seven : [seven]));
        return;
      }
      posts++;
      const body = JSON.stringify(posts <= 2 ? { error: 'x' } : recordFor(100 + posts));
      res.writeHead(posts <= 2 ? 500 : 201, { 'content-type': 'application/json' });
      res.end(body);
    });
    const [a, b] = await Promise.all([app.email.send(input), app.email.send(input)]);
    // Each is settled by its own key's retry; the look-alike 7 in the log belongs to neither.
    expect([a.id, b.id].sort()).toEqual([103, 104]);
    expect(posts).toBe(4);
  });
});

describe('single sends: the caller abort during a 429 backoff', () => {
  // The abort is scheduled when the engine has seen the 429 and chosen its backoff (an attempt event
  // with a delay), so it falls in the sleep however slow the machine: an abort while the POST is still
  // unanswered is rightly `uncertain` (its own spec above), which a timer from the start could hit.
  const backoffs: Array<(e: AttemptEvent) => void> = [];
  const observer: DeliveryObserver = {
    attempt: (e) => {
      if (e.retryDelayMs !== undefined) for (const seen of backoffs.splice(0)) seen(e);
    },
    reconcile: () => undefined,
    outcome: () => undefined,
  };
  const app = useScriptedEmailApp({
    timeoutMs: 10_000,
    overrides: [{ provide: DeliveryObserver, useValue: observer }],
  });

  it('is not-sent, and cuts the sleep short', async () => {
    // a 30 s sleep outlasts the test's timeout: ending at all means the abort cut it short
    const seen = script(app.server, [{ status: 429, headers: { 'retry-after': '30' } }]);
    const controller = new AbortController();
    let delayMs: number | undefined;
    backoffs.push((e) => {
      delayMs = e.retryDelayMs;
      setTimeout(() => controller.abort(), 50);
    });
    const options = { signal: controller.signal, timeoutMs: 60_000 };
    const err = (await failure(app.email.send(input, options))) as EmailAbortError;
    expect(delayMs).toBeGreaterThanOrEqual(29_000);
    expect(err).toBeInstanceOf(EmailAbortError);
    expect(err.outcome).toBe('not-sent');
    expect(seen.order()).toEqual([POST]);
  });
});

describe('single sends with reconcile or idempotency off', () => {
  let server: ScriptedServer;
  beforeEach(async () => {
    server = await startScriptedServer();
  });
  afterEach(() => server.close());

  it('reconcile off: retried with the same key and body, never looked up', async () => {
    const { email, close } = await emailApp({ baseUrl: server.url, reconcile: false });
    try {
      const seen = script(server, ['reset', 503, 201]);
      expect((await email.send(input)).id).toBe(100);
      expect(seen.order()).toEqual([POST, POST, POST]);
      expect(new Set(seen.posts().map((p) => p.headers['idempotency-key'])).size).toBe(1);
      expect(new Set(seen.posts().map((p) => p.body)).size).toBe(1);
    } finally {
      await close();
    }
  });

  it('reconcile off and no retries: EmailSendUncertainError with the key, the failure as cause', async () => {
    const { email, close } = await emailApp({ baseUrl: server.url, reconcile: false, maxRetries: 0 });
    try {
      const seen = script(server, [502]);
      const err = (await failure(email.send(input))) as EmailSendUncertainError;
      expect(err).toBeInstanceOf(EmailSendUncertainError);
      expect(err.outcome).toBe('uncertain');
      expect(err.idempotencyKey).toBe(seen.posts()[0].headers['idempotency-key']);
      expect(err.cause).toBeInstanceOf(EmailProviderError);
      expect(seen.order()).toEqual([POST]);
    } finally {
      await close();
    }
  });

  it('idempotency off and no key: an uncertain send is looked up but never retried', async () => {
    const { email, close } = await emailApp({ baseUrl: server.url, idempotency: 'off' });
    try {
      const seen = script(server, [503, 201]);
      const err = (await failure(email.send(input))) as EmailUnavailableError;
      expect(err).toBeInstanceOf(EmailUnavailableError);
      expect(err.outcome).toBe('uncertain');
      expect(seen.order()).toEqual([POST, LIST]);
      expect(seen.posts()[0].headers['idempotency-key']).toBeUndefined();

      server.requests.length = 0;
      const found = script(server, ['reset'], () => [recordFor(5)]);
      expect((await email.send(input)).id).toBe(5);
      expect(found.order()).toEqual([POST, LIST, 'GET /emails/5']);
    } finally {
      await close();
    }
  });

  it('idempotency off: a not-sent failure (429) is still retried', async () => {
    const { email, close } = await emailApp({ baseUrl: server.url, idempotency: 'off' });
    try {
      const seen = script(server, [{ status: 429, headers: { 'retry-after': '0' } }, 201]);
      expect((await email.send(input)).id).toBe(100);
      expect(seen.order()).toEqual([POST, POST]);
    } finally {
      await close();
    }
  });
});

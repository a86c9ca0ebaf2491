import { Agent, type Dispatcher } from 'undici';
import { EmailAbortError, EmailConnectionError, EmailTimeoutError } from '../../lib/index.js';
import { emailApp, useScriptedEmailApp } from '../support/email-app.js';
import { emailLogJson } from '../support/records.fixture.js';
import { json, startScriptedServer } from '../support/scripted-server.js';

const send = { from: 'app@example.com', to: ['ada@example.com'], subject: 'Hi', text: 'Hello' };

describe('transport: deadlines, aborts, connections', () => {
  const app = useScriptedEmailApp({
    maxRetries: 0,
    reconcile: false,
    idempotency: 'off', // one raw attempt: this spec is about the transport, not delivery
    timeoutMs: 5000,
  });

  it('slow headers hit the per-call deadline: EmailTimeoutError, uncertain for a send', async () => {
    app.server.handle(() => undefined); // never answers: ending at all means the deadline ended it
    const started = Date.now();
    // 3 s: long enough for the request to reach the server on a loaded machine (the case under test is
    // a request that went out and got no headers back), short enough for the test's timeout
    const err = (await app.email
      .send(send, { timeoutMs: 3_000 })
      .catch((e: unknown) => e)) as EmailTimeoutError;
    const took = Date.now() - started;
    expect(err).toBeInstanceOf(EmailTimeoutError);
    expect(err.timeoutMs).toBe(3_000);
    expect(err.outcome).toBe('uncertain');
    expect(err.retryable).toBe(true);
    expect(took).toBeGreaterThanOrEqual(2_900);
    expect(app.server.requests).toHaveLength(1);
  });

  it('a slow body hits the deadline too', async () => {
    app.server.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('[');
    });
    const err = (await app.email.list({ timeoutMs: 300 }).catch((e: unknown) => e)) as EmailTimeoutError;
    expect(err).toBeInstanceOf(EmailTimeoutError);
    expect(err.outcome).toBeUndefined();
  });

  it('the module timeoutMs applies when the call gives none', async () => {
    const slow = await emailApp({ baseUrl: app.server.url, maxRetries: 0, timeoutMs: 250 });
    app.server.handle(() => undefined);
    try {
      const err = (await slow.email.list().catch((e: unknown) => e)) as EmailTimeoutError;
      expect(err).toBeInstanceOf(EmailTimeoutError);
      expect(err.timeoutMs).toBe(250);
    } finally {
      await slow.close();
    }
  });

  it('a caller abort is reported as an abort, not a timeout', async () => {
    app.server.handle(() => undefined);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const err = (await app.email
      .send(send, { signal: controller.signal })
      .catch((e: unknown) => e)) as EmailAbortError;
    expect(err).toBeInstanceOf(EmailAbortError);
    expect(err).not.toBeInstanceOf(EmailTimeoutError);
    expect(err.outcome).toBe('uncertain');
    expect(err.retryable).toBe(false);
  });

  it('an already aborted signal makes no request', async () => {
    const err = (await app.email
      .send(send, { signal: AbortSignal.abort() })
      .catch((e: unknown) => e)) as EmailAbortError;
    expect(err).toBeInstanceOf(EmailAbortError);
    expect(err.outcome).toBe('not-sent');
    expect(app.server.requests).toHaveLength(0);
  });

  it('the connection reset after the request went out is uncertain', async () => {
    app.server.handle((req) => {
      req.socket.destroy();
    });
    const err = (await app.email.send(send).catch((e: unknown) => e)) as EmailConnectionError;
    expect(err).toBeInstanceOf(EmailConnectionError);
    expect(err.outcome).toBe('uncertain');
    expect(app.server.requests).toHaveLength(1);
  });

  it('keeps connections alive and reuses them', async () => {
    app.server.handle((_req, res) => json(res, 200, [emailLogJson()]));
    for (let i = 0; i < 10; i++) await app.email.list();
    expect(app.server.requests).toHaveLength(10);
    // undici may open a spare connection while the first one finishes; never one per request
    expect(app.server.connections).toBeLessThanOrEqual(2);
    expect(app.server.sockets.size).toBeLessThanOrEqual(2);
  });

  it('closes its pool when the application closes', async () => {
    app.server.handle((_req, res) => json(res, 200, [emailLogJson()]));
    await app.email.list();
    const [socket] = [...app.server.sockets];
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    await app.close();
    await closed; // the server saw the client close its kept-alive connection
    const err = await app.email.list().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EmailConnectionError);
  });
});

describe('transport: connection refused', () => {
  it('is a not-sent EmailConnectionError for a send', async () => {
    const gone = await startScriptedServer();
    await gone.close(); // its port now refuses connections
    const { email, close } = await emailApp({ baseUrl: gone.url, maxRetries: 0 });
    try {
      const err = (await email.send(send).catch((e: unknown) => e)) as EmailConnectionError;
      expect(err).toBeInstanceOf(EmailConnectionError);
      expect(err.code).toBe('ECONNREFUSED');
      expect(err.outcome).toBe('not-sent');
      expect(err.retryable).toBe(true);
    } finally {
      await close();
    }
  });
});

describe('transport: a caller-supplied dispatcher', () => {
  /** An undici Agent that counts what is dispatched through it. */
  class CountingAgent extends Agent {
    dispatched: string[] = [];
    override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
      this.dispatched.push(`${options.method} ${String(options.origin)}${options.path}`);
      return super.dispatch(options, handler);
    }
  }

  it('is used for every request, with the base path, and left open when the app closes', async () => {
    const server = await startScriptedServer((_req, res) => json(res, 200, [emailLogJson()]));
    const agent = new CountingAgent();
    const { email, close } = await emailApp({ baseUrl: `${server.url}/v2`, dispatcher: agent });
    try {
      await email.list({ limit: 3 });
      await email.list();
      expect(agent.dispatched).toEqual([
        `GET ${server.url}/v2/emails?limit=3`,
        `GET ${server.url}/v2/emails`,
      ]);
      expect(server.requests.map((r) => r.url)).toEqual(['/v2/emails?limit=3', '/v2/emails']);
      await close();
      // still usable: the module does not close what it did not create
      const res = await agent.request({ origin: server.url, path: '/v2/emails', method: 'GET' });
      expect(res.statusCode).toBe(200);
      await res.body.text();
    } finally {
      await agent.close();
      await server.close();
    }
  });
});

import {
  EmailApiError,
  EmailAuthenticationError,
  EmailBadRequestError,
  EmailConflictError,
  EmailError,
  EmailForbiddenError,
  EmailNotFoundError,
  EmailProviderError,
  EmailRateLimitError,
  EmailServerError,
  EmailUnavailableError,
} from '../../lib/index.js';
import { useScriptedEmailApp } from '../support/email-app.js';

const send = { from: 'app@example.com', to: ['ada@example.com'], subject: 'Hi', text: 'Hello' };

const table = [
  { status: 400, type: EmailBadRequestError, retryable: false, outcome: 'not-sent' },
  { status: 401, type: EmailAuthenticationError, retryable: false, outcome: 'not-sent' },
  { status: 403, type: EmailForbiddenError, retryable: false, outcome: 'not-sent' },
  { status: 404, type: EmailNotFoundError, retryable: false, outcome: 'not-sent' },
  { status: 409, type: EmailConflictError, retryable: false, outcome: 'uncertain' },
  { status: 429, type: EmailRateLimitError, retryable: true, outcome: 'not-sent' },
  { status: 500, type: EmailServerError, retryable: true, outcome: 'uncertain' },
  { status: 502, type: EmailProviderError, retryable: true, outcome: 'uncertain' },
  { status: 503, type: EmailUnavailableError, retryable: true, outcome: 'uncertain' },
] as const;

const bodies = {
  json: (status: number) => ({
    type: 'application/json',
    text: JSON.stringify({ error: `problem ${status}` }),
  }),
  empty: () => ({ type: undefined, text: '' }),
  html: () => ({ type: 'text/html', text: '<html><body><h1>Bad Gateway</h1></body></html>' }),
};

describe('error responses become typed errors', () => {
  // one raw attempt: this spec is about mapping answers to errors, not about delivery
  const app = useScriptedEmailApp({ scope: 'all', maxRetries: 0, reconcile: false, idempotency: 'off' });

  for (const row of table) {
    for (const kind of Object.keys(bodies) as (keyof typeof bodies)[]) {
      it(`${row.status} with a ${kind} body on a send and a read`, async () => {
        app.server.handle((_req, res) => {
          const body = bodies[kind](row.status);
          const headers: Record<string, string> = {};
          if (body.type) headers['content-type'] = body.type;
          res.writeHead(row.status, headers);
          res.end(body.text);
        });
        const sendErr = await app.email.send(send).catch((e: unknown) => e);
        expect(sendErr).toBeInstanceOf(row.type);
        expect(sendErr).toBeInstanceOf(EmailApiError);
        expect(sendErr).toBeInstanceOf(EmailError);
        const e = sendErr as EmailApiError;
        expect(e.status).toBe(row.status);
        expect(e.method).toBe('POST');
        expect(e.path).toBe('/emails');
        expect(e.retryable).toBe(row.retryable);
        expect(e.outcome).toBe(row.outcome);
        expect(e.name).toBe(row.type.name);
        if (kind === 'json') {
          expect(e.apiMessage).toBe(`problem ${row.status}`);
          expect(e.message).toContain(`problem ${row.status}`);
        } else {
          expect(e.apiMessage).toBeUndefined();
          expect(e.message).toBe(`POST /emails failed with status ${row.status}`);
        }
        const readErr = (await app.email.get(3).catch((x: unknown) => x)) as EmailApiError;
        expect(readErr).toBeInstanceOf(row.type);
        expect(readErr.path).toBe('/emails/3');
        expect(readErr.outcome).toBeUndefined();
      });
    }
  }

  it('Retry-After in seconds becomes retryAfterMs', async () => {
    app.server.handle((_req, res) => {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '7' });
      res.end(JSON.stringify({ error: 'slow down' }));
    });
    const err = (await app.email.list().catch((e: unknown) => e)) as EmailRateLimitError;
    expect(err).toBeInstanceOf(EmailRateLimitError);
    expect(err.retryAfterMs).toBe(7000);
  });

  it('Retry-After as an HTTP date becomes retryAfterMs', async () => {
    const at = new Date(Date.now() + 30_000).toUTCString();
    app.server.handle((_req, res) => {
      res.writeHead(429, { 'retry-after': at });
      res.end();
    });
    const err = (await app.email.list().catch((e: unknown) => e)) as EmailRateLimitError;
    expect(err.retryAfterMs).toBeGreaterThan(25_000);
    expect(err.retryAfterMs).toBeLessThanOrEqual(30_000);
  });

  it('a status outside the contract gives a plain EmailApiError', async () => {
    app.server.handle((_req, res) => {
      res.writeHead(418);
      res.end('teapot');
    });
    const err = (await app.email.send(send).catch((e: unknown) => e)) as EmailApiError;
    expect(err.constructor).toBe(EmailApiError);
    expect(err.status).toBe(418);
    expect(err.outcome).toBe('not-sent');
  });

  it('a JSON error body without a string error field gives no apiMessage', async () => {
    app.server.handle((_req, res) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { nested: true } }));
    });
    const err = (await app.email.list().catch((e: unknown) => e)) as EmailApiError;
    expect(err).toBeInstanceOf(EmailBadRequestError);
    expect(err.apiMessage).toBeUndefined();
  });
});

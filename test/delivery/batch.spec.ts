import {
  EmailBadRequestError,
  EmailBatchUncertainError,
  EmailConnectionError,
  EmailServerError,
  EmailTimeoutError,
} from '../../lib/index.js';
import { emailApp, useScriptedEmailApp } from '../support/email-app.js';
import { startScriptedServer } from '../support/scripted-server.js';
import { CapturingLogger } from '../support/capturing.logger.js';
import { failure, recordFor, script } from './delivery.support.js';

const items = [
  { to: ['ada@example.com'], subject: 'A', text: 'a' },
  { to: ['bob@example.com'], subject: 'B', html: '<p>b</p>' },
];
const BATCH = 'POST /emails/batch';

describe('batches: retried only when nothing can have been accepted', () => {
  const app = useScriptedEmailApp({ defaultFrom: 'App <app@example.com>', timeoutMs: 5000 });

  it.each([500, 502, 503])(
    'status %i: never retried, EmailBatchUncertainError carries the items',
    async (status) => {
      const seen = script(app.server, [status, 201]);
      const before = Date.now();
      const err = (await failure(app.email.sendBatch(items))) as EmailBatchUncertainError;
      expect(err).toBeInstanceOf(EmailBatchUncertainError);
      expect(err.outcome).toBe('uncertain');
      expect(err.retryable).toBe(false);
      expect(err.attempts).toBe(1);
      expect((err.cause as EmailServerError).status).toBe(status);
      expect(err.items).toEqual(items.map((item) => ({ from: 'App <app@example.com>', ...item })));
      expect(err.since.getTime()).toBeGreaterThanOrEqual(before - 5);
      expect(err.since.getTime()).toBeLessThanOrEqual(Date.now());
      expect(seen.order()).toEqual([BATCH]);
      expect(JSON.stringify(err)).not.toContain('<p>b</p>'); // toJSON summarises the items
    },
  );

  it('a reset after sending: never retried', async () => {
    const seen = script(app.server, ['reset', 201]);
    const err = (await failure(app.email.sendBatch(items))) as EmailBatchUncertainError;
    expect(err).toBeInstanceOf(EmailBatchUncertainError);
    expect(err.cause).toBeInstanceOf(EmailConnectionError);
    expect(seen.order()).toEqual([BATCH]);
  });

  it('a timeout: never retried', async () => {
    const seen = script(app.server, ['hang']);
    const err = (await failure(app.email.sendBatch(items, { timeoutMs: 200 }))) as EmailBatchUncertainError;
    expect(err).toBeInstanceOf(EmailBatchUncertainError);
    expect(err.cause).toBeInstanceOf(EmailTimeoutError);
    expect(seen.order()).toEqual([BATCH]);
  });

  it('429 is retried with the same body', async () => {
    const seen = script(app.server, [{ status: 429, headers: { 'retry-after': '0' } }, 201]);
    const records = await app.email.sendBatch(items);
    expect(records.map((r) => r.id)).toEqual([100]);
    expect(seen.order()).toEqual([BATCH, BATCH]);
    expect(seen.posts()[1].body).toBe(seen.posts()[0].body);
  });

  it('429 then 503: uncertain after one refused attempt', async () => {
    const seen = script(app.server, [{ status: 429, headers: { 'retry-after': '0' } }, 503]);
    const err = (await failure(app.email.sendBatch(items))) as EmailBatchUncertainError;
    expect(err).toBeInstanceOf(EmailBatchUncertainError);
    expect(err.attempts).toBe(2);
    expect(seen.order()).toEqual([BATCH, BATCH]);
  });

  it('400 is the error itself, not-sent, not retried', async () => {
    const seen = script(app.server, [400]);
    const err = (await failure(app.email.sendBatch(items))) as EmailBadRequestError;
    expect(err).toBeInstanceOf(EmailBadRequestError);
    expect(err.outcome).toBe('not-sent');
    expect(seen.order()).toEqual([BATCH]);
  });

  it('the items can be looked up with findSent', async () => {
    script(app.server, [503], () => [
      recordFor(1, { toAddresses: ['bob@example.com'], subject: 'B', html: '<p>b</p>' }),
    ]);
    const err = (await failure(app.email.sendBatch(items))) as EmailBatchUncertainError;
    const found = await Promise.all(err.items.map((item) => app.email.findSent(item, { since: err.since })));
    expect(found.map((r) => r.record?.id ?? null)).toEqual([null, 1]);
  });
});

describe('batches: connection refused is retried', () => {
  it('every attempt is made, then the not-sent error', async () => {
    const logger = new CapturingLogger();
    const gone = await startScriptedServer();
    await gone.close(); // its port now refuses connections
    const { email, close } = await emailApp({ baseUrl: gone.url, maxRetries: 2, logger });
    try {
      const err = (await failure(
        email.sendBatch(items.map((i) => ({ ...i, from: 'a@example.com' }))),
      )) as EmailConnectionError;
      expect(err).toBeInstanceOf(EmailConnectionError);
      expect(err.outcome).toBe('not-sent');
      const lines = logger.messages.filter((l) => l.startsWith('POST /emails/batch'));
      expect(lines).toEqual([
        expect.stringMatching(
          /^POST \/emails\/batch -> failed: ECONNREFUSED \(retry in \d+ ms\), ECONNREFUSED \(retry in \d+ ms\), ECONNREFUSED \(no retry\)$/,
        ),
      ]);
    } finally {
      await close();
    }
  });

  it('succeeds once the service is up', async () => {
    const server = await startScriptedServer();
    await new Promise<void>((r) => server.server.close(() => r())); // refuse connections for now
    const { email, close } = await emailApp({ baseUrl: server.url, maxRetries: 8 });
    try {
      script(server, [201]);
      const pending = email.sendBatch(items.map((i) => ({ ...i, from: 'a@example.com' })));
      await new Promise((r) => setTimeout(r, 100));
      await new Promise<void>((r) => server.server.listen(server.port, '127.0.0.1', () => r()));
      const records = await pending;
      expect(records).toHaveLength(1);
      expect(server.requests).toHaveLength(1);
    } finally {
      await close();
      await server.close();
    }
  });
});

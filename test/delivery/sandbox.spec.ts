import { EmailBatchUncertainError, EmailSendUncertainError, type EmailService } from '../../lib/index.js';
import { emailApp } from '../support/email-app.js';
import { failure } from './delivery.support.js';
import { useSandbox } from '../support/sandbox.js';

const LIST = 'GET /emails?limit=100';
const POST = 'POST /emails';

describe('delivery rules against the sandbox fault modes', () => {
  const sandbox = useSandbox({ reset: true });
  let email: EmailService;
  let close: () => Promise<void>;
  let n = 0;
  const input = () => ({
    from: 'app@example.com',
    to: ['ada@example.com'],
    subject: `Order ${++n}`,
    text: 'Hi',
  });

  beforeAll(async () => {
    ({ email, close } = await emailApp({
      baseUrl: sandbox.baseUrl,
      apiKey: sandbox.apiKey,
      timeoutMs: 10_000,
    }));
  });
  afterAll(async () => {
    await close();
  });

  const seen = () => sandbox.requests().map((r) => `${r.method} ${r.path}`);
  const posts = () => sandbox.requests().filter((r) => r.method === 'POST');

  function expectOneKeyOneBody(): void {
    const sent = posts();
    expect(sent.length).toBeGreaterThan(0);
    for (const r of sent) {
      expect(r.headers['idempotency-key']).toBe(sent[0].headers['idempotency-key']);
      expect(r.body).toBe(sent[0].body);
    }
  }

  it.each(['drop-after', 'fail-after'] as const)(
    '%s: the message exists, the retry with its key gets it back, nothing is sent twice',
    async (mode) => {
      sandbox.faults.add({ route: 'POST /emails', mode });
      const record = await email.send(input());
      expect(sandbox.messages().map((m) => m.id)).toEqual([record.id]);
      expect(seen()).toEqual([POST, POST]);
      expectOneKeyOneBody();
    },
  );

  it.each(['drop-after', 'fail-after'] as const)(
    '%s with no retry left: the last-resort look-up proves its own message, nothing is sent twice',
    async (mode) => {
      sandbox.faults.add({ route: 'POST /emails', mode });
      const record = await email.send(input(), { maxRetries: 0 });
      expect(sandbox.messages().map((m) => m.id)).toEqual([record.id]);
      expect(seen()).toEqual([POST, LIST, `GET /emails/${record.id}`]);
    },
  );

  it('drop-before: retried with the same key and body: one message', async () => {
    sandbox.faults.add({ route: 'POST /emails', mode: 'drop-before' });
    const record = await email.send(input());
    expect(sandbox.messages().map((m) => m.id)).toEqual([record.id]);
    expect(seen()).toEqual([POST, POST]);
    expectOneKeyOneBody();
  });

  it('503 twice: three sends with one key, one message', async () => {
    sandbox.faults.add({ route: 'POST /emails', mode: 'status', status: 503, times: 2 });
    const record = await email.send(input());
    expect(sandbox.messages()).toHaveLength(1);
    expect(sandbox.messages()[0].id).toBe(record.id);
    expect(seen()).toEqual([POST, POST, POST]);
    expectOneKeyOneBody();
  });

  it('reconcile off, drop-after: the retry with the same key gets the same message back', async () => {
    const off = await emailApp({ baseUrl: sandbox.baseUrl, apiKey: sandbox.apiKey, reconcile: false });
    try {
      sandbox.faults.add({ route: 'POST /emails', mode: 'drop-after', times: 2 });
      const record = await off.email.send(input());
      expect(sandbox.messages().map((m) => m.id)).toEqual([record.id]);
      expect(seen()).toEqual([POST, POST, POST]);
      expectOneKeyOneBody();
    } finally {
      await off.close();
    }
  });

  it('the last-resort look-up failing too: uncertain with the key, still one message', async () => {
    sandbox.faults.add({ route: 'POST /emails', mode: 'drop-after' });
    sandbox.faults.add({ route: 'GET /emails', mode: 'status', status: 500, times: 2 });
    const err = (await failure(email.send(input(), { maxRetries: 0 }))) as EmailSendUncertainError;
    expect(err).toBeInstanceOf(EmailSendUncertainError);
    expect(err.idempotencyKey).toBe(posts()[0].headers['idempotency-key']);
    expect(sandbox.messages()).toHaveLength(1);
    expect(seen()).toEqual([POST, LIST, LIST]);
  });

  it('never created and retries exhausted: EmailSendUncertainError, and indeed nothing sent', async () => {
    sandbox.faults.add({ route: 'POST /emails', mode: 'status', status: 502, times: 3 });
    const err = (await failure(email.send(input()))) as EmailSendUncertainError;
    expect(err).toBeInstanceOf(EmailSendUncertainError);
    expect(err.attempts).toBe(3);
    expect(posts().map((r) => r.headers['idempotency-key'])).toEqual(Array(3).fill(err.idempotencyKey));
    expect(sandbox.messages()).toHaveLength(0);
    // the caller's safe move: the same input with the same key
    const again = await email.send(
      { ...JSON.parse(posts()[0].body) },
      { idempotencyKey: err.idempotencyKey },
    );
    expect(sandbox.messages().map((m) => m.id)).toEqual([again.id]);
  });

  it('429 with Retry-After: waited for, retried with the same key, one message', async () => {
    // half a second: above the first backoff's 250 ms ceiling, so only Retry-After explains the wait
    sandbox.faults.add({ route: 'POST /emails', mode: 'status', status: 429, retryAfter: 0.5 });
    const started = Date.now();
    await email.send(input());
    expect(Date.now() - started).toBeGreaterThanOrEqual(450);
    expect(seen()).toEqual([POST, POST]);
    expectOneKeyOneBody();
    expect(sandbox.messages()).toHaveLength(1);
  });

  it('a batch dropped after processing: one request, EmailBatchUncertainError, items findable', async () => {
    sandbox.faults.add({ route: 'POST /emails/batch', mode: 'drop-after' });
    const items = [input(), input(), input()];
    const err = (await failure(email.sendBatch(items))) as EmailBatchUncertainError;
    expect(err).toBeInstanceOf(EmailBatchUncertainError);
    expect(seen()).toEqual(['POST /emails/batch']);
    expect(sandbox.messages()).toHaveLength(3);
    const found = await Promise.all(err.items.map((item) => email.findSent(item, { since: err.since })));
    expect(found.map((r) => r.record?.subject)).toEqual(items.map((i) => i.subject));
  });

  it.each(['fail-after', 'drop-before'] as const)('a batch with %s is never retried', async (mode) => {
    sandbox.faults.add({ route: 'POST /emails/batch', mode });
    const err = await failure(email.sendBatch([input()]));
    expect(err).toBeInstanceOf(EmailBatchUncertainError);
    expect(seen()).toEqual(['POST /emails/batch']);
    expect(sandbox.messages()).toHaveLength(mode === 'fail-after' ? 1 : 0);
  });

  it('a batch refused with 429 is retried: one request more, each item once', async () => {
    sandbox.faults.add({ route: 'POST /emails/batch', mode: 'status', status: 429, retryAfter: 0 });
    const records = await email.sendBatch([input(), input()]);
    expect(records).toHaveLength(2);
    expect(seen()).toEqual(['POST /emails/batch', 'POST /emails/batch']);
    expect(sandbox.messages()).toHaveLength(2);
  });
});

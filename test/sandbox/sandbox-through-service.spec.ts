import {
  EmailAuthenticationError,
  EmailBadRequestError,
  EmailBatchUncertainError,
  EmailConflictError,
  EmailForbiddenError,
  EmailNotFoundError,
  EmailRateLimitError,
  EmailService,
  type EmailLog,
  type EmailModuleOptions,
} from '../../lib/index.js';
import { emailApp } from '../support/email-app.js';
import { useSandbox } from '../support/sandbox.js';

const KEY = 'through-service-key-0001';
const input = (extra: Record<string, unknown> = {}) => ({
  from: 'Shop <orders@example.com>',
  to: ['ada@example.org'],
  subject: 'Your order',
  html: '<p>Thanks! <a href="https://shop.example/orders/1">Order</a></p>',
  text: 'Thanks!',
  ...extra,
});

/** The same flows as the raw contract specs, through EmailService, against one sandbox. */
describe('EmailSandbox through EmailService', () => {
  const sandbox = useSandbox({
    keys: ['sk_test_through_service_01', { key: 'sk_test_free_plan_key_01', plan: 'free' }],
    templates: { 5: { subject: 'Hello {{name}}', text: 'Hi {{name}}' } },
    tracking: { opens: true, clicks: true },
    reset: true,
  });
  const closes: (() => Promise<void>)[] = [];

  async function service(options: Partial<EmailModuleOptions> = {}): Promise<EmailService> {
    const { email, close } = await emailApp({ apiKey: sandbox.apiKey, baseUrl: sandbox.baseUrl, ...options });
    closes.push(close);
    return email;
  }

  let email: EmailService;

  beforeAll(async () => {
    email = await service();
  });
  afterAll(async () => {
    for (const close of closes) await close();
  });

  it('sends, gets, lists newest first and lists events, with dates as Date', async () => {
    const first = await email.send(input({ subject: 'one' }));
    const second = await email.send(input({ subject: 'two' }));
    expect(first).toMatchObject({ id: 1, status: 'sent', subject: 'one', trackOpens: true });
    expect(first.createdAt).toBeInstanceOf(Date);
    const detail = await email.get(second.id);
    expect(detail.html).toContain(sandbox.baseUrl);
    expect(detail.bodyText).toBe('Thanks!');
    expect((await email.list()).map((m) => m.id)).toEqual([2, 1]);
    expect((await email.list({ limit: 1 })).map((m) => m.id)).toEqual([2]);
    sandbox.simulateOpen(second.id);
    sandbox.simulateClick(second.id);
    const events = await email.listEvents(second.id);
    expect(events.map((e) => [e.type, e.url])).toEqual([
      ['click', 'https://shop.example/orders/1'],
      ['open', null],
    ]);
    expect(events[0].occurredAt).toBeInstanceOf(Date);
    const after = await email.get(second.id);
    expect([after.openCount, after.clickCount]).toEqual([1, 1]);
    expect(after.openedAt).toBeInstanceOf(Date);
  });

  it('sends every single send with an Idempotency-Key, and a repeat with the same key creates nothing', async () => {
    const a = await email.send(input(), { idempotencyKey: KEY });
    const b = await email.send(input(), { idempotencyKey: KEY });
    expect(b.id).toBe(a.id);
    await email.send(input({ subject: 'auto key' }));
    const keys = sandbox.requests().map((r) => r.headers['idempotency-key']);
    expect(keys.slice(0, 2)).toEqual([KEY, KEY]);
    expect(keys[2]).toMatch(/^[-A-Za-z0-9_:]{16,128}$/);
    expect(sandbox.messages()).toHaveLength(2);
  });

  it('sends a batch and a template email', async () => {
    const batch = await email.sendBatch([input({ subject: 'b1' }), input({ subject: 'b2' })]);
    expect(batch.map((m) => m.subject)).toEqual(['b1', 'b2']);
    const templated = await email.send({
      from: 'orders@example.com',
      to: ['ada@example.org'],
      templateId: 5,
      variables: { name: 'Ada' },
    });
    expect(templated.subject).toBe('Hello Ada');
  });

  it('schedules, and the message is sent once the sandbox clock passes scheduledAt', async () => {
    const scheduledAt = new Date(sandbox.clock.now() + 3_600_000);
    const log = await email.send(input({ scheduledAt }));
    expect(log.status).toBe('scheduled');
    expect(log.scheduledAt?.getTime()).toBe(scheduledAt.getTime());
    sandbox.clock.advance(3_600_000);
    expect((await email.get(log.id)).status).toBe('sent');
  });

  it('maps the contract errors to typed errors', async () => {
    await expect(email.send(input({ from: 'x@unverified.test' }))).rejects.toBeInstanceOf(
      EmailForbiddenError,
    );
    await expect(email.get(404)).rejects.toBeInstanceOf(EmailNotFoundError);
    await expect(email.listEvents(404)).rejects.toBeInstanceOf(EmailNotFoundError);
    const templated = { from: 'orders@example.com', to: ['ada@example.org'], templateId: 5, variables: {} };
    await expect(email.send(templated)).rejects.toBeInstanceOf(EmailBadRequestError);
    const stranger = await service({ apiKey: 'sk_test_not_a_key_0000' });
    await expect(stranger.list()).rejects.toBeInstanceOf(EmailAuthenticationError);
    const free = await service({ apiKey: 'sk_test_free_plan_key_01' });
    const later = new Date(Date.now() + 3_600_000);
    await expect(free.send(input({ scheduledAt: later }))).rejects.toBeInstanceOf(EmailForbiddenError);
    expect(sandbox.messages()).toHaveLength(0);
  });

  it('reports a reused key with a different body as a conflict, without sending', async () => {
    await email.send(input(), { idempotencyKey: KEY });
    await expect(email.send(input({ subject: 'other' }), { idempotencyKey: KEY })).rejects.toBeInstanceOf(
      EmailConflictError,
    );
    expect(sandbox.messages()).toHaveLength(1);
  });

  it('reports a 429 with its Retry-After', async () => {
    const limited = sandbox.mailbox({ quota: { recipients: 1, windowMs: 60_000 } });
    try {
      const client = await service({ apiKey: limited.apiKey, baseUrl: limited.baseUrl, maxRetries: 0 });
      await client.send(input());
      const err = await client.send(input()).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(EmailRateLimitError);
      expect((err as EmailRateLimitError).retryAfterMs).toBeGreaterThan(50_000);
      expect(limited.messages()).toHaveLength(1);
    } finally {
      await limited.close();
    }
  });

  describe('ambiguous outcomes (fault injection)', () => {
    it.each(['drop-after', 'fail-after'] as const)(
      '%s: the message was created; the service finds it and exactly one exists',
      async (mode) => {
        sandbox.faults.add({ route: 'POST /emails', mode });
        const log = await email.send(input());
        expect(sandbox.messages().map((m) => m.id)).toEqual([log.id]);
        expect(sandbox.faults.injected).toBe(1);
      },
    );

    it('drop-before: nothing was created; the retry with the same key creates it once', async () => {
      sandbox.faults.add({ route: 'POST /emails', mode: 'drop-before' });
      const log = await email.send(input());
      expect(sandbox.messages().map((m) => m.id)).toEqual([log.id]);
      const posts = sandbox.requests().filter((r) => r.method === 'POST');
      expect(posts).toHaveLength(2);
      expect(posts[1].headers['idempotency-key']).toBe(posts[0].headers['idempotency-key']);
      expect(posts[1].body).toBe(posts[0].body);
    });

    it('503 before processing: retried with the same key and body, one message', async () => {
      sandbox.faults.add({ route: 'POST /emails', mode: 'status', status: 503 });
      const log = await email.send(input());
      expect(sandbox.messages().map((m) => m.id)).toEqual([log.id]);
    });

    it('a second send with the key still in flight does not create a second message', async () => {
      sandbox.faults.add({ route: 'POST /emails', mode: 'delay', ms: 300, at: 'after' });
      const first = email.send(input(), { idempotencyKey: KEY });
      await new Promise((r) => setTimeout(r, 100));
      const second = await email.send(input(), { idempotencyKey: KEY }).catch((e: unknown) => e);
      const record = await first;
      if (!(second instanceof Error)) expect((second as EmailLog).id).toBe(record.id);
      expect(sandbox.messages()).toHaveLength(1);
    });

    it('a batch whose answer is lost is not retried and is reported uncertain', async () => {
      sandbox.faults.add({ route: 'POST /emails/batch', mode: 'drop-after' });
      const err = await email.sendBatch([input(), input()]).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(EmailBatchUncertainError);
      expect(sandbox.requests().filter((r) => r.path === '/emails/batch')).toHaveLength(1);
      expect(sandbox.messages()).toHaveLength(2);
    });
  });
});

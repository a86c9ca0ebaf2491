import {
  EmailValidationError,
  type BatchEmailItem,
  type EmailService,
  type SendManyProgress,
  type SendManyResult,
} from '../../lib/index.js';
import { emailApp } from '../support/email-app.js';
import { useSandbox } from '../support/sandbox.js';

/** Look-alike mail: senders, recipients and subjects repeat; each body is its own. */
const item = (i: number, tag = 'm'): BatchEmailItem => ({
  from: `shop${i % 2}@example.com`,
  to: Array.from({ length: 1 + (i % 3) }, (_, k) => `user${(i + k) % 5}@example.org`),
  subject: `Notice ${i % 4}`,
  text: `${tag}-${i}`,
});
const items = (n: number, tag?: string) => Array.from({ length: n }, (_, i) => item(i, tag));

describe('EmailService.sendMany against the sandbox', () => {
  const sandbox = useSandbox({ maxRequestLog: 10_000, reset: true });
  let email: EmailService;
  let close: () => Promise<void>;

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

  const batches = () => sandbox.requests().filter((r) => r.method === 'POST' && r.path === '/emails/batch');

  /**
   * Checks every answer against what the sandbox holds: a 'sent' item's record is the message that
   * carries its own body; a 'not-sent' item's body is nowhere; no body is there twice.
   */
  function expectTrueAnswers(list: BatchEmailItem[], results: SendManyResult[]): void {
    expect(results).toHaveLength(list.length);
    const held = new Map<string, number[]>();
    for (const m of sandbox.messages()) {
      const ids = held.get(m.bodyText ?? '') ?? [];
      ids.push(m.id);
      held.set(m.bodyText ?? '', ids);
    }
    for (const [, ids] of held) expect(ids).toHaveLength(1); // nothing sent twice
    results.forEach((r, i) => {
      expect(r.index).toBe(i);
      const ids = held.get(list[i].text!) ?? [];
      if (r.status === 'sent') expect(ids).toEqual([r.record.id]);
      if (r.status === 'not-sent') expect(ids).toEqual([]);
    });
  }

  it('sends 250 emails as batches of at most 100, answering item by item with its own record', async () => {
    const list = items(250);
    const progress: SendManyProgress[] = [];
    const results = await email.sendMany(list, { onBatch: (p) => progress.push(p) });
    expect(batches().map((r) => (r.json as unknown[]).length)).toEqual([100, 100, 50]);
    expect(results.every((r) => r.status === 'sent')).toBe(true);
    expectTrueAnswers(list, results);
    expect(progress.map((p) => [p.batch, p.batches, p.results.length, p.done, p.total])).toEqual([
      [0, 3, 100, 100, 250],
      [1, 3, 100, 200, 250],
      [2, 3, 50, 250, 250],
    ]);
  });

  it('never resends a batch that may have been accepted: its items are looked up one by one', async () => {
    sandbox.faults.add({ route: 'POST /emails/batch', mode: 'drop-after', times: 1, skip: 1 });
    const list = items(300);
    const results = await email.sendMany(list);
    expect(batches()).toHaveLength(3); // the dropped batch was not sent again
    expect(sandbox.messages()).toHaveLength(300);
    expectTrueAnswers(list, results);
    const second = results.slice(100, 200);
    expect(second.filter((r) => r.status === 'sent').length).toBeGreaterThan(0); // proven by their bodies
    expect(second.every((r) => r.status === 'sent' || r.status === 'uncertain')).toBe(true);
  });

  it('answers not-sent for a batch refused before anything was accepted', async () => {
    sandbox.faults.add({ route: 'POST /emails/batch', mode: 'status', status: 429, times: 10, skip: 1 });
    const list = items(150);
    const results = await email.sendMany(list, { maxRetries: 0 });
    expect(results.slice(0, 100).every((r) => r.status === 'sent')).toBe(true);
    expect(results.slice(100).every((r) => r.status === 'not-sent')).toBe(true);
    expectTrueAnswers(list, results);
  });

  it('gives a true answer for each of 1,000 look-alike emails under random faults', async () => {
    sandbox.faults.random({
      probability: 0.3,
      seed: 25,
      modes: [
        'status',
        'drop-before',
        'drop-after',
        'fail-after',
        { mode: 'status', status: 429, retryAfter: 0 }, // the 429 path, not its wait
      ],
      routes: ['POST /emails/batch'],
    });
    const list = items(1000, 'chaos');
    const results = await email.sendMany(list, { maxRetries: 2 });
    sandbox.faults.clear();
    expectTrueAnswers(list, results);
    const count = (s: SendManyResult['status']) => results.filter((r) => r.status === s).length;
    expect(count('sent') + count('not-sent') + count('uncertain')).toBe(1000);
    expect(count('sent')).toBeGreaterThan(0);
    // the faults did hit: some batches ended uncertain (reconciled) or refused
    expect(batches().some((r) => r.fault !== null && r.fault.includes('after'))).toBe(true);
    expect(count('not-sent') + count('uncertain')).toBeGreaterThan(0);
  }, 60_000);

  it("stops between batches when the caller's signal aborts: the rest are not sent", async () => {
    const controller = new AbortController();
    const list = items(300);
    const results = await email.sendMany(list, {
      signal: controller.signal,
      onBatch: ({ batch }) => {
        if (batch === 0) controller.abort();
      },
    });
    expect(batches()).toHaveLength(1);
    expect(results.slice(0, 100).every((r) => r.status === 'sent')).toBe(true);
    expect(results.slice(100).every((r) => r.status === 'not-sent')).toBe(true);
    expectTrueAnswers(list, results);
  });

  it('refuses the whole call before any request, naming every bad item by its index', async () => {
    const list: unknown[] = items(300);
    list[3] = { ...item(3), to: ['not an address'] };
    list[250] = { ...item(250), subject: undefined, text: undefined };
    const err = (await email
      .sendMany(list as BatchEmailItem[])
      .catch((e: unknown) => e)) as EmailValidationError;
    expect(err).toBeInstanceOf(EmailValidationError);
    const paths = err.issues.map((i) => i.path);
    expect(paths).toContain('[3].to[0]');
    expect(paths.some((p) => p.startsWith('[250]'))).toBe(true);
    expect(paths.every((p) => p.startsWith('[3]') || p.startsWith('[250]'))).toBe(true);
    expect(sandbox.requests()).toHaveLength(0);
  });

  it('refuses items that are not an array, and an empty list', async () => {
    for (const bad of [{ to: ['a@example.com'] }, 'x', null, []]) {
      const err = await email.sendMany(bad as never).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(EmailValidationError);
    }
    expect(sandbox.requests()).toHaveLength(0);
  });

  it('cuts batches to the rateLimit recipients budget', async () => {
    const limited = await emailApp({
      baseUrl: sandbox.baseUrl,
      apiKey: sandbox.apiKey,
      timeoutMs: 20_000,
      rateLimit: { recipients: { limit: 50, intervalMs: 1000 } },
    });
    try {
      const list = items(60);
      const results = await limited.email.sendMany(list);
      expectTrueAnswers(list, results);
      const sizes = batches().map((r) => (r.json as BatchEmailItem[]).reduce((n, x) => n + x.to.length, 0));
      expect(sizes.every((n) => n <= 50)).toBe(true);
      expect(sizes.reduce((a, b) => a + b, 0)).toBe(list.reduce((n, x) => n + x.to.length, 0));
    } finally {
      await limited.close();
    }
  });
});

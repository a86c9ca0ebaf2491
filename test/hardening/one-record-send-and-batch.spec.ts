import { EmailSendUncertainError, type BatchEmailItem, type EmailService } from '../../lib/index.js';
import { Clock, type SleepEnd } from '../../lib/time/clock.helpers.js';
import { emailApp } from '../support/email-app.js';
import { useSandbox } from '../support/sandbox.js';

/**
 * Issue 36: a send and a batch item with identical content, in one instance, must never be answered
 * with one record; a look-up never says "none" for a message that another call of the instance holds.
 */
const X: BatchEmailItem = {
  from: 'shop@example.com',
  to: ['ada@example.com'],
  subject: 'Code',
  text: 'Code 1111',
};
/** A look-alike of X: same sender, recipients and subject, another body. */
const Y: BatchEmailItem = { ...X, text: 'Code 2222' };

/** Backoffs pass at once, so a send uses up its retries while a slow batch is still in flight. */
class InstantClock extends Clock {
  now(): number {
    return Date.now();
  }
  sleep(_ms: number, until: { signal?: AbortSignal } = {}): Promise<SleepEnd> {
    return Promise.resolve(until.signal?.aborted ? 'aborted' : 'elapsed');
  }
}

const settle = <T>(p: Promise<T>) =>
  p.then(
    (value) => ({ value, error: undefined }),
    (error: unknown) => ({ value: undefined, error }),
  );

describe('one record for two identical calls (issue 36)', () => {
  const sandbox = useSandbox({ reset: true });
  let email: EmailService;
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ email, close } = await emailApp({
      baseUrl: sandbox.baseUrl,
      apiKey: sandbox.apiKey,
      timeoutMs: 20_000,
      overrides: [{ provide: Clock, useValue: new InstantClock() }],
    }));
  });
  afterAll(async () => {
    await close();
  });

  const posts = (path: string) =>
    sandbox.requests().filter((r) => r.method === 'POST' && r.path === path).length;
  async function until(check: () => boolean): Promise<void> {
    for (let i = 0; i < 1_000 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  }

  for (const batchFault of ['drop-before', 'status 503'] as const) {
    it(`a slow send and a batch holding the same mail (${batchFault}): the item is never handed the send's record`, async () => {
      sandbox.faults.add({ route: 'POST /emails', mode: 'delay', ms: 1_500, at: 'after' });
      sandbox.faults.add(
        batchFault === 'drop-before'
          ? { route: 'POST /emails/batch', mode: 'drop-before' }
          : { route: 'POST /emails/batch', mode: 'status', status: 503 },
      );
      const sending = email.send(X);
      await until(() => sandbox.messages().length === 1); // created; its answer is still on its way
      const [sent, many] = await Promise.all([sending, email.sendMany([X, Y])]);

      expect(sandbox.messages().map((m) => m.id)).toEqual([sent.id]); // the batch created nothing
      expect(many[0]).toMatchObject({ index: 0, status: 'uncertain' });
      expect(many[1]).toMatchObject({ index: 1, status: 'uncertain' });
      expect(many.map((r) => (r.status === 'sent' ? r.record.id : null))).toEqual([null, null]);
    });
  }

  it("a send that fails 503 while a batch holding the same mail is in flight is not handed the batch's record", async () => {
    sandbox.faults.add({ route: 'POST /emails/batch', mode: 'delay', ms: 1_500, at: 'after' });
    sandbox.faults.add({ route: 'POST /emails', mode: 'status', status: 503, times: 3 });
    const batch = email.sendBatch([Y, X]);
    await until(() => sandbox.messages().length === 2); // processed; its answer is still on its way
    const send = await settle(email.send(X, { maxRetries: 2 }));
    const records = await batch;

    expect(posts('/emails')).toBe(3);
    expect(send.error).toBeInstanceOf(EmailSendUncertainError);
    expect((send.error as EmailSendUncertainError).idempotencyKey).toEqual(expect.any(String));
    expect(records.map((r) => r.id).sort()).toEqual(
      sandbox
        .messages()
        .map((m) => m.id)
        .sort(),
    );
  });

  describe('findSent', () => {
    it("after send(X) in the same instance: 'held', with the record, never 'none'", async () => {
      const since = new Date();
      const sent = await email.send(X);
      const found = await email.findSent(X, { since });
      expect(found.certainty).toBe('held');
      expect(found.record).toBeNull();
      expect(found.held.map((r) => r.id)).toEqual([sent.id]);
      expect(found.candidates).toEqual([]);
    });

    it("'held' also for a template send whose record another call holds", async () => {
      const since = new Date();
      const input = { from: X.from, to: X.to, templateId: 1, variables: { name: 'Ada' } };
      const sent = await email.send(input);
      const found = await email.findSent(input, { since });
      expect(found).toMatchObject({ certainty: 'held', record: null, candidates: [] });
      expect(found.held.map((r) => r.id)).toEqual([sent.id]);
    });

    it("'none' only when nothing looks like it; a look-alike another call holds is 'held', not 'none'", async () => {
      const since = new Date();
      expect(await email.findSent(X, { since })).toEqual({
        record: null,
        certainty: 'none',
        candidates: [],
        held: [],
      });
      const other = await email.send(Y);
      const found = await email.findSent(X, { since });
      expect(found.certainty).toBe('held');
      expect(found.held.map((r) => r.id)).toEqual([other.id]);
    });

    it("a message of an identical send still in flight is 'held', and the send keeps its record", async () => {
      sandbox.faults.add({ route: 'POST /emails', mode: 'delay', ms: 1_000, at: 'after' });
      const since = new Date();
      const sending = email.send(X);
      await until(() => sandbox.messages().length === 1);
      const found = await email.findSent(X, { since });
      const sent = await sending;
      expect(found.record).toBeNull();
      expect(found.certainty).toBe('held');
      expect(found.held.map((r) => r.id)).toEqual([sent.id]);
    });
  });
});

import fc from 'fast-check';
import { EmailError, type EmailLog, type EmailService, type SendManyResult } from '../../lib/index.js';
import type {
  SandboxFault,
  SandboxFaultRule,
  SandboxRandomFaults,
  SandboxRoute,
} from '../../lib/testing/index.js';
import { emailApp } from '../support/email-app.js';
import { useSandbox } from '../support/sandbox.js';

/**
 * Property (issue 22): many concurrent sends through one `EmailService`, many of them look-alike
 * (the same sender, recipients and subject with other bodies), some identical, template and inline
 * mixed, under random faults on every route: lost answers, 409/500/502/503 before and after
 * processing, 429, delays. For every call that resolved, its record is a message that carries its own
 * content; no record is handed to two calls; a call rejected as `not-sent` left nothing behind, and
 * no content is held more often than calls that may have sent it.
 * Issue 36: the same mail goes at once through `send`, `sendBatch` (one batch of every call that
 * takes that way) and `sendMany`, so identical calls of the three kinds overlap, each look-up racing
 * batches in flight: still no record is handed to two calls.
 */
const SENDERS = ['shop@example.com', 'Shop <noreply@example.com>'];
const RECIPIENTS = [['ada@example.com'], ['ada@example.com', 'bob@example.com']];
const SUBJECTS = ['Your login code', 'Your order has shipped'];
const CODES = ['1111', '2222', '3333', '4444']; // few: identical bodies happen
const NAMES = ['Ada', 'Bob', 'Cy'];
const FAULTS: SandboxRandomFaults['modes'] = [
  'delay',
  { mode: 'delay', ms: 300, at: 'after' }, // created, answered late: identical calls look up meanwhile
  'drop-before',
  'drop-after',
  'fail-after',
  { mode: 'fail-after', status: 409 },
  { mode: 'status', status: 409 },
  { mode: 'status', status: 429, retryAfter: 0 },
  { mode: 'status', status: 500 },
  { mode: 'status', status: 502 },
  { mode: 'status', status: 503 },
];

/** The same faults, answers that come late weighing more: identical calls then overlap. */
const LATE: SandboxFault = { mode: 'delay', ms: 400, at: 'after' };
const ROUTES: SandboxRoute[] = ['POST /emails', 'POST /emails/batch', 'GET /emails', 'GET /emails/:id'];
/** A fault on one route, after a few requests went through: sends and batches then fail in every order. */
const scriptedFault: fc.Arbitrary<SandboxFaultRule> = fc
  .record({
    route: fc.constantFrom(...ROUTES),
    fault: fc.constantFrom(...(FAULTS as SandboxFault[]).filter((f) => typeof f !== 'string'), LATE),
    skip: fc.integer({ min: 0, max: 3 }),
  })
  .map(({ route, fault, skip }) => ({ ...fault, route, skip }));
const IDENTICAL_FAULTS: SandboxRandomFaults['modes'] = [...FAULTS!, LATE, LATE, LATE, LATE];

interface Call {
  from: string;
  to: string[];
  template: boolean;
  subject: string;
  code: string;
  name: string;
  retries: number;
  via: 'send' | 'batch' | 'many';
}

/** What one call ended with: its record, or its error. */
interface Settled {
  record?: EmailLog;
  error?: unknown;
}

const call: fc.Arbitrary<Call> = fc.record({
  from: fc.constantFrom(...SENDERS),
  to: fc.constantFrom(...RECIPIENTS),
  template: fc.boolean(),
  subject: fc.constantFrom(...SUBJECTS),
  code: fc.constantFrom(...CODES),
  name: fc.constantFrom(...NAMES),
  retries: fc.integer({ min: 0, max: 2 }),
  via: fc.constantFrom('send', 'batch', 'many'),
});

/** Mostly the very same mail: one sender, recipient and subject, two bodies, inline and template. */
const SAME = { from: SENDERS[0], to: RECIPIENTS[0], subject: SUBJECTS[0], name: NAMES[0] };
const identicalCall: fc.Arbitrary<Call> = fc.record({
  from: fc.constant(SAME.from),
  to: fc.constant(SAME.to),
  template: fc.boolean(),
  subject: fc.constant(SAME.subject),
  code: fc.constantFrom(...CODES.slice(0, 3)),
  name: fc.constant(SAME.name),
  retries: fc.integer({ min: 0, max: 2 }),
  via: fc.constantFrom('send', 'batch', 'many'),
});

/** Cases the probe found, run first every time: a late send against a failed batch, and the reverse. */
const X: Call = { ...SAME, template: false, code: CODES[0], retries: 0, via: 'send' };
const IDENTICAL_EXAMPLES: [Call[], number, SandboxFaultRule[]][] = [
  [
    [X, { ...X, via: 'many' }],
    0,
    [
      { ...LATE, route: 'POST /emails' },
      { mode: 'drop-before', route: 'POST /emails/batch', skip: 0 },
    ],
  ],
  [
    [
      { ...X, via: 'batch' },
      { ...X, retries: 2 },
    ],
    0,
    [
      { mode: 'delay', ms: 2_500, at: 'after', route: 'POST /emails/batch' },
      { mode: 'status', status: 503, route: 'POST /emails', times: 3 },
    ],
  ],
];

const addressOf = (value: string) => /<([^>]+)>/.exec(value)?.[1] ?? value;

function inputOf(c: Call) {
  return c.template
    ? { from: c.from, to: c.to, templateId: 1, variables: { name: c.name } }
    : { from: c.from, to: c.to, subject: c.subject, text: `Your code is ${c.code}` };
}

/** What the message of a call must carry: sender, recipients, rendered subject and text. */
function contentOf(c: Call): string {
  const subject = c.template ? `Welcome, ${c.name}` : c.subject;
  const text = c.template
    ? `Hello ${c.name}, get started: https://example.com/start`
    : `Your code is ${c.code}`;
  return JSON.stringify([addressOf(c.from), c.to, subject, text]);
}

/** Every call at once: sends one by one, the `batch` calls as one `sendBatch`, the `many` ones as one `sendMany`. */
async function sendAll(email: EmailService, calls: Call[]): Promise<Settled[]> {
  const settled: Settled[] = new Array<Settled>(calls.length);
  const indexes = (via: Call['via']) => calls.flatMap((c, i) => (c.via === via ? [i] : []));
  const batch = indexes('batch');
  const many = indexes('many');
  await Promise.all([
    ...indexes('send').map((i) =>
      email.send(inputOf(calls[i]), { maxRetries: calls[i].retries }).then(
        (record: EmailLog) => void (settled[i] = { record }),
        (error: unknown) => void (settled[i] = { error }),
      ),
    ),
    batch.length === 0
      ? undefined
      : email.sendBatch(batch.map((i) => inputOf(calls[i]))).then(
          (records) => batch.forEach((i, k) => (settled[i] = { record: records[k] })),
          (error: unknown) => batch.forEach((i) => (settled[i] = { error })),
        ),
    many.length === 0
      ? undefined
      : email.sendMany(many.map((i) => inputOf(calls[i]))).then((results: SendManyResult[]) =>
          results.forEach((r, k) => {
            settled[many[k]] = r.status === 'sent' ? { record: r.record } : { error: r.error };
          }),
        ),
  ]);
  return settled;
}

describe('look-alike email under random faults (property)', () => {
  const sandbox = useSandbox();
  let email: EmailService;
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ email, close } = await emailApp({
      baseUrl: sandbox.baseUrl,
      apiKey: sandbox.apiKey,
      timeoutMs: 8_000,
    }));
  });
  afterAll(async () => {
    await close();
  });

  /** Sends `calls` at once under random faults, then checks every answer against what the sandbox holds. */
  async function check(
    calls: Call[],
    seed: number,
    probability: number,
    modes = FAULTS,
    scripted: SandboxFaultRule[] = [],
  ): Promise<void> {
    sandbox.reset();
    sandbox.faults.random({ probability, seed, modes });
    for (const rule of scripted) sandbox.faults.add(rule);
    const settled = await sendAll(email, calls);
    sandbox.faults.clear();
    const held = new Map(
      sandbox
        .messages()
        .map((m) => [m.id, JSON.stringify([addressOf(m.fromAddress), m.toAddresses, m.subject, m.bodyText])]),
    );

    const owners = new Map<number, number>();
    const perContent = new Map<string, { resolved: number; uncertain: number; held: number }>();
    const tally = (content: string) => {
      let t = perContent.get(content);
      if (!t) perContent.set(content, (t = { resolved: 0, uncertain: 0, held: 0 }));
      return t;
    };
    for (const content of held.values()) tally(content).held++;
    settled.forEach((s, i) => {
      const content = contentOf(calls[i]);
      if (s.record) {
        expect({ call: i, content: held.get(s.record.id) }).toEqual({ call: i, content });
        expect(owners.get(s.record.id)).toBeUndefined(); // no record handed to two calls
        owners.set(s.record.id, i);
        tally(content).resolved++;
      } else {
        expect(s.error).toBeInstanceOf(EmailError);
        if ((s.error as EmailError).outcome !== 'not-sent') tally(content).uncertain++;
      }
    });
    for (const [content, t] of perContent) {
      // Nothing lost (every resolved call is held), nothing twice (no more than calls that may have sent it).
      expect({ content, ok: t.held >= t.resolved && t.held <= t.resolved + t.uncertain }).toEqual({
        content,
        ok: true,
      });
    }
  }

  it('every resolved call holds its own message, none twice; not-sent leaves nothing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(call, { minLength: 4, maxLength: 24 }), fc.integer(), (calls, seed) =>
        check(calls, seed, 0.3),
      ),
      { numRuns: 30 },
    );
  }, 120_000);

  it('identical mail at once through send, sendBatch and sendMany: no record is held by two calls', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(identicalCall, { minLength: 2, maxLength: 6 }),
        fc.integer(),
        fc.array(scriptedFault, { maxLength: 4 }),
        (calls, seed, scripted) => check(calls, seed, 0.3, IDENTICAL_FAULTS, scripted),
      ),
      { numRuns: 60, examples: IDENTICAL_EXAMPLES },
    );
  }, 120_000);
});

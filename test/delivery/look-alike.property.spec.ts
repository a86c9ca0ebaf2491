import fc from 'fast-check';
import { EmailError, type EmailLog, type EmailService } from '../../lib/index.js';
import type { SandboxRandomFaults } from '../../lib/testing/index.js';
import { emailApp } from '../support/email-app.js';
import { useSandbox } from '../support/sandbox.js';

/**
 * Property (issue 22): many concurrent sends through one `EmailService`, many of them look-alike
 * (the same sender, recipients and subject with other bodies), some identical, template and inline
 * mixed, under random faults on every route: lost answers, 409/500/502/503 before and after
 * processing, 429, delays. For every call that resolved, its record is a message that carries its own
 * content; no record is handed to two calls; a call rejected as `not-sent` left nothing behind, and
 * no content is held more often than calls that may have sent it.
 */
const SENDERS = ['shop@example.com', 'Shop <noreply@example.com>'];
const RECIPIENTS = [['ada@example.com'], ['ada@example.com', 'bob@example.com']];
const SUBJECTS = ['Your login code', 'Your order has shipped'];
const CODES = ['1111', '2222', '3333', '4444']; // few: identical bodies happen
const NAMES = ['Ada', 'Bob', 'Cy'];
const FAULTS: SandboxRandomFaults['modes'] = [
  'delay',
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

interface Call {
  from: string;
  to: string[];
  template: boolean;
  subject: string;
  code: string;
  name: string;
  retries: number;
}

const call: fc.Arbitrary<Call> = fc.record({
  from: fc.constantFrom(...SENDERS),
  to: fc.constantFrom(...RECIPIENTS),
  template: fc.boolean(),
  subject: fc.constantFrom(...SUBJECTS),
  code: fc.constantFrom(...CODES),
  name: fc.constantFrom(...NAMES),
  retries: fc.integer({ min: 0, max: 2 }),
});

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

  it('every resolved call holds its own message, none twice; not-sent leaves nothing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(call, { minLength: 4, maxLength: 24 }), fc.integer(), async (calls, seed) => {
        sandbox.reset();
        sandbox.faults.random({ probability: 0.3, seed, modes: FAULTS });
        const settled = await Promise.all(
          calls.map((c) =>
            email.send(inputOf(c), { maxRetries: c.retries }).then(
              (record: EmailLog) => ({ record, error: undefined }),
              (error: unknown) => ({ record: undefined, error }),
            ),
          ),
        );
        sandbox.faults.clear();
        const held = new Map(
          sandbox
            .messages()
            .map((m) => [
              m.id,
              JSON.stringify([addressOf(m.fromAddress), m.toAddresses, m.subject, m.bodyText]),
            ]),
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
      }),
      { numRuns: 30 },
    );
  }, 120_000);
});

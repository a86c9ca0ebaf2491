import fc from 'fast-check';
import {
  EmailSuppressedError,
  EmailSuppressions,
  type BatchEmailItem,
  type EmailService,
  type EmailSuppressionOptions,
} from '../../lib/index.js';
import { emailApp } from '../support/email-app.js';
import { useSandbox } from '../support/sandbox.js';

/**
 * Property: over generated look-alike mail (a few senders, recipients and subjects repeated with other
 * bodies; identical mail; template and inline mixed; recipients written with other cases and display names)
 * and generated suppression lists, a message is sent if and only if none of its recipients is suppressed,
 * through `send` and `sendMany` alike; with `partial: 'send-to-rest'`, it is sent to exactly the recipients
 * that are not (and refused only when none is left). A suppressed address never reaches the sandbox.
 */
const PEOPLE = ['ada', 'bob', 'cy', 'dee', 'eve'];
const DOMAINS = ['example.com', 'mail.example.org'];
const ADDRESSES = PEOPLE.flatMap((p) => DOMAINS.map((d) => `${p}@${d}`));
const SENDERS = ['shop@example.com', 'Shop <noreply@example.com>'];
const SUBJECTS = ['Your login code', 'Your order has shipped'];
const BODIES = ['1111', '2222', '3333']; // few: identical mail happens

/** The address as written in a message: another case, or behind a display name. */
const written = fc
  .record({ address: fc.constantFrom(...ADDRESSES), upper: fc.boolean(), named: fc.boolean() })
  .map(({ address, upper, named }) => {
    const [local, domain] = address.split('@');
    const text = upper ? `${local[0].toUpperCase()}${local.slice(1)}@${domain.toUpperCase()}` : address;
    return named ? `${local.toUpperCase()} <${text}>` : text;
  });

const message = fc
  .record({
    from: fc.constantFrom(...SENDERS),
    to: fc.uniqueArray(written, { minLength: 1, maxLength: 4, selector: (w) => bare(w) }),
    template: fc.boolean(),
    subject: fc.constantFrom(...SUBJECTS),
    body: fc.constantFrom(...BODIES),
  })
  .map(({ from, to, template, subject, body }): BatchEmailItem =>
    template
      ? { from, to, templateId: SAMPLE_TEMPLATE_ID, variables: { name: body } }
      : { from, to, subject, text: `Code ${body}` },
  );

/** The template every sandbox knows (`Welcome, {{name}}`). */
const SAMPLE_TEMPLATE_ID = 1;

/** A recipient as the list compares it (as the property states it, written from docs/suppression.md). */
function bare(recipient: string): string {
  const m = /<([^>]*)>$/.exec(recipient);
  return (m ? m[1] : recipient).toLowerCase();
}

const sandbox = useSandbox();

async function check(partial: NonNullable<EmailSuppressionOptions['partial']>): Promise<void> {
  await fc.assert(
    fc.asyncProperty(
      fc.subarray(ADDRESSES),
      fc.array(message, { minLength: 1, maxLength: 8 }),
      fc.boolean(),
      async (listed, messages, many) => {
        const mailbox = sandbox.mailbox();
        const { email, moduleRef, close } = await emailApp({ sandbox: mailbox, suppression: { partial } });
        try {
          if (listed.length > 0) await moduleRef.get(EmailSuppressions).add(listed, { reason: 'bounced' });
          const suppressed = new Set(listed);
          const expected = messages.map((m) => {
            const rest = m.to.filter((r) => !suppressed.has(bare(r)));
            if (rest.length === m.to.length) return m.to;
            return partial === 'send-to-rest' && rest.length > 0 ? rest : null;
          });
          const outcomes = many ? await viaSendMany(email, messages) : await viaSend(email, messages);
          expect(outcomes).toEqual(expected.map((to) => (to === null ? 'suppressed' : to)));
          const delivered = mailbox.messages().flatMap((m) => m.toAddresses.map(bare));
          for (const address of delivered) expect(suppressed.has(address)).toBe(false);
          expect(mailbox.messages()).toHaveLength(expected.filter((to) => to !== null).length);
        } finally {
          await close();
          await mailbox.close();
        }
      },
    ),
    { numRuns: 40, seed: 4949 },
  );
}

/** Each message through `send`: its record's recipients, or `'suppressed'`. */
async function viaSend(
  email: EmailService,
  messages: BatchEmailItem[],
): Promise<Array<string[] | 'suppressed'>> {
  const out: Array<string[] | 'suppressed'> = [];
  for (const m of messages) {
    try {
      out.push((await email.send(m)).toAddresses);
    } catch (err) {
      if (!(err instanceof EmailSuppressedError)) throw err;
      out.push('suppressed');
    }
  }
  return out;
}

/** The messages through one `sendMany`. */
async function viaSendMany(
  email: EmailService,
  messages: BatchEmailItem[],
): Promise<Array<string[] | 'suppressed'>> {
  const results = await email.sendMany(messages);
  return results.map((r) => {
    if (r.status === 'sent') return r.record.toAddresses;
    if (r.status === 'not-sent' && r.error instanceof EmailSuppressedError) return 'suppressed';
    throw r.status === 'not-sent' || r.status === 'uncertain' ? r.error : new Error('unexpected');
  });
}

describe('property: sent iff no recipient is suppressed', () => {
  it("refuses a message with any suppressed recipient (partial: 'refuse')", () => check('refuse'), 120_000);
  it("sends to exactly the recipients left (partial: 'send-to-rest')", () => check('send-to-rest'), 120_000);
});

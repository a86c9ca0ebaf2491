import {
  emailMatchers,
  waitForMessage,
  type EmailMatchers,
  type SandboxMailbox,
  type SandboxMessageMatch,
} from '../../lib/testing/index.js';
import { inline, RawClient, assertionFailure } from './sandbox.client.js';
import { useSandbox } from '../support/sandbox.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace jest {
    // eslint-disable-next-line @typescript-eslint/no-empty-object-type
    interface Matchers<R> extends EmailMatchers<R> {}
  }
}

expect.extend(emailMatchers);

/**
 * Issue 50, item 11: an asymmetric matcher (`expect.any(Number)`, `expect.anything()`,
 * `expect.objectContaining(...)`, `expect.arrayContaining(...)`) works everywhere a criterion takes a
 * value, in the matchers and in `waitForMessage`; a criterion given as an inherited or non-enumerable
 * property is checked like any other. On the code before the fix, `templateId: expect.any(Number)` never
 * matched (so `.not.toHaveSent({ to, templateId: expect.anything() })` passed although the template mail
 * was sent, and `waitForMessage` timed out), `variables` and `attachments` refused a matcher, and a
 * criterion on the prototype or not enumerable was skipped (the assertion passed on anything).
 */
const failure = assertionFailure;

describe('asymmetric matchers everywhere a criterion takes a value (issue 50, item 11)', () => {
  const sandbox = useSandbox();
  const client = new RawClient(() => sandbox);
  let mailbox: SandboxMailbox;

  beforeAll(async () => {
    mailbox = sandbox.mailbox();
    const key = { key: mailbox.apiKey };
    await client.send(
      {
        ...inline({ to: ['ada@example.org'], subject: 'Invoice', text: 'Attached' }),
        attachments: [
          { filename: 'invoice.pdf', content: Buffer.from('%PDF-1.4 invoice').toString('base64') },
        ],
      },
      key,
    );
    await client.send(
      { from: 'shop@example.com', to: ['bob@example.org'], templateId: 1, variables: { name: 'Bob' } },
      key,
    );
  });
  afterAll(() => client.close());

  it('templateId: expect.any(Number) and expect.anything() match the template mail, and .not sees it', () => {
    expect(mailbox).toHaveSent({ templateId: expect.any(Number) });
    expect(mailbox).toHaveSentTo('bob@example.org', { templateId: expect.anything() });
    expect(mailbox).toHaveSentTimes(1, { templateId: expect.any(Number) });
    expect(
      failure(() => expect(mailbox).not.toHaveSent({ to: 'bob@example.org', templateId: expect.anything() })),
    ).toContain('Expected no message matching');
    // A mail without a template has templateId null: any(Number) does not take it.
    expect(
      failure(() => expect(mailbox).toHaveSentTo('ada@example.org', { templateId: expect.any(Number) })),
    ).toContain('no template');
  });

  it('waitForMessage with an asymmetric templateId finds the mail at once', async () => {
    const found = await waitForMessage(mailbox, { templateId: expect.any(Number) }, { timeoutMs: 2_000 });
    expect(found.toAddresses).toEqual(['bob@example.org']);
  });

  it('variables, attachments, an attachment entry and its content, the list of recipients', () => {
    expect(mailbox).toHaveSent({ variables: expect.objectContaining({ name: 'Bob' }) });
    expect(
      failure(() => expect(mailbox).toHaveSent({ variables: expect.objectContaining({ name: 'Eve' }) })),
    ).toContain('variables differ');
    expect(mailbox).toHaveSent({
      attachments: expect.arrayContaining([expect.objectContaining({ filename: 'invoice.pdf' })]),
    });
    expect(mailbox).toHaveSent({
      attachments: [expect.objectContaining({ filename: expect.stringMatching(/\.pdf$/) })],
    });
    expect(mailbox).toHaveSent({ attachments: [{ filename: 'invoice.pdf', content: expect.any(Buffer) }] });
    expect(
      failure(() => expect(mailbox).toHaveSent({ attachments: [{ content: expect.any(String) }] })),
    ).toContain('no attachment like');
    expect(mailbox).toHaveSent({ to: expect.arrayContaining(['bob@example.org']) });
    expect(mailbox).toHaveSent({ to: expect.stringMatching(/^ada@/) });
  });

  it('a criterion on the prototype or not enumerable is checked, never skipped', () => {
    const inherited = Object.create({ subject: 'No such subject' }) as SandboxMessageMatch;
    expect(failure(() => expect(mailbox).toHaveSent(inherited))).toContain('subject: "No such subject"');
    const hidden = Object.defineProperty({}, 'templateId', {
      value: 99,
      enumerable: false,
    }) as SandboxMessageMatch;
    expect(failure(() => expect(mailbox).toHaveSent(hidden))).toContain('templateId: 99');
    class Criteria {
      get to() {
        return 'nobody@example.org';
      }
    }
    expect(failure(() => expect(mailbox).toHaveSent(new Criteria() as SandboxMessageMatch))).toContain(
      'to: "nobody@example.org"',
    );
    // Inside variables too: an inherited variable is a variable to check.
    const variables = Object.create({ name: 'Eve' }) as Record<string, string>;
    expect(failure(() => expect(mailbox).toHaveSent({ variables }))).toContain('variable name is "Bob"');
    // And they still pass when they match.
    expect(mailbox).toHaveSent(Object.create({ subject: 'Invoice' }) as SandboxMessageMatch);
  });

  it('an inherited criterion that is unknown is refused by name, as an own one is', () => {
    const typo = Object.create({ subjet: 'Invoice' }) as SandboxMessageMatch;
    expect(failure(() => expect(mailbox).toHaveSent(typo))).toContain('unknown criterion "subjet"');
  });
});

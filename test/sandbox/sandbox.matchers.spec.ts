import {
  emailMatchers,
  lastMessageTo,
  linksIn,
  waitForMessage,
  type EmailMatchers,
  type SandboxMailbox,
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

const failure = assertionFailure;

describe('emailMatchers and the plain helpers', () => {
  const sandbox = useSandbox();
  let mailbox: SandboxMailbox;
  let client: RawClient;
  const PDF = Buffer.from('%PDF-1.4 invoice').toString('base64');

  beforeAll(async () => {
    mailbox = sandbox.mailbox({ tracking: { clicks: true } });
    client = new RawClient(() => sandbox);
    const key = { key: mailbox.apiKey };
    await client.send(
      inline({
        to: ['Ada Lovelace <ada@example.org>'],
        subject: 'Your invoice',
        html: '<p>See <a href="https://shop.example/invoice?id=7&amp;x=1">invoice</a></p>',
        text: 'Invoice 7 is attached.',
        attachments: [{ filename: 'invoice.pdf', content: PDF, contentType: 'application/pdf' }],
      }),
      key,
    );
    await client.send(
      { from: 'shop@example.com', to: ['bob@example.org'], templateId: 1, variables: { name: 'Bob' } },
      key,
    );
    await client.send(inline({ to: ['bob@example.org'], subject: 'Second' }), key);
  });
  afterAll(async () => {
    await client.close();
  });

  it('toHaveSent passes on a partial match of subject, text, html, template and attachments', () => {
    expect(mailbox).toHaveSent();
    expect(mailbox).toHaveSent({ to: 'ada@example.org', subject: 'Your invoice' });
    expect(mailbox).toHaveSent({ text: 'attached', html: /shop\.example/ });
    expect(mailbox).toHaveSent({ templateId: 1, variables: { name: 'Bob' }, subject: 'Welcome, Bob' });
    expect(mailbox).toHaveSent({ attachments: [{ filename: 'invoice.pdf', content: '%PDF-1.4 invoice' }] });
    expect(mailbox).toHaveSent({ subject: expect.stringContaining('invoice') });
    expect(mailbox.sent()).toHaveSent({ from: 'orders@example.com' });
    expect(mailbox).not.toHaveSent({ subject: 'Your' }); // a subject string is matched exactly
  });

  it('toHaveSent fails naming what was sent and why each differs', () => {
    const message = failure(() => expect(mailbox).toHaveSent({ to: 'ada@example.org', subject: 'Welcome' }));
    expect(message).toContain('Expected a message matching { to: "ada@example.org", subject: "Welcome" }');
    expect(message).toContain(
      '#1 to Ada Lovelace <ada@example.org>: "Your invoice" [invoice.pdf]  <- subject differs',
    );
    expect(message).toContain(
      '#2 to bob@example.org: "Welcome, Bob" (template 1)  <- not to "ada@example.org"',
    );
    const attachments = failure(() => expect(mailbox).toHaveSent({ attachments: [{ filename: 'x.pdf' }] }));
    expect(attachments).toContain('no attachment like { filename: "x.pdf" }');
    const variables = failure(() => expect(mailbox).toHaveSent({ variables: { name: 'Ada' } }));
    expect(variables).toContain('variable name is "Bob"');
    const negated = failure(() => expect(mailbox).not.toHaveSent({ templateId: 1 }));
    expect(negated).toContain('Expected no message matching { templateId: 1 }, but one was:');
    expect(negated).toContain('#2 to bob@example.org');
    expect(failure(() => expect(sandbox).toHaveSent())).toContain('(nothing was sent)');
  });

  it('toHaveSentTo matches the bare address and an optional partial', () => {
    expect(mailbox).toHaveSentTo('ADA@example.org');
    expect(mailbox).toHaveSentTo('bob@example.org', { subject: 'Second' });
    expect(mailbox).toHaveSentTo(/@example\.org$/);
    expect(mailbox).not.toHaveSentTo('carol@example.org');
    const message = failure(() => expect(mailbox).toHaveSentTo('bob@example.org', { subject: 'Third' }));
    expect(message).toContain('Expected a message to "bob@example.org" matching { subject: "Third" }');
    expect(message).toContain('#3 to bob@example.org: "Second"  <- subject differs');
  });

  it('toHaveSentTimes counts the matches exactly', () => {
    expect(mailbox).toHaveSentTimes(3);
    expect(mailbox).toHaveSentTimes(2, { to: 'bob@example.org' });
    expect(mailbox).toHaveSentTimes(0, { subject: 'Nope' });
    const message = failure(() => expect(mailbox).toHaveSentTimes(1, { to: 'bob@example.org' }));
    expect(message).toContain('Expected 1 message matching { to: "bob@example.org" }, but 2 matched');
    expect(message).toContain('#1 to Ada Lovelace <ada@example.org>');
    expect(() => expect(mailbox).toHaveSentTimes(-1)).toThrow(/count of 0 or more/);
  });

  it('waitForMessage resolves when the message arrives and rejects listing what came instead', async () => {
    const other = sandbox.mailbox();
    const waiting = waitForMessage(other, { subject: 'Later' }, { timeoutMs: 5000 });
    setTimeout(() => void client.send(inline({ subject: 'Later' }), { key: other.apiKey }), 50);
    expect((await waiting).subject).toBe('Later');
    await expect(waitForMessage(other, { subject: 'Never' }, { timeoutMs: 100 })).rejects.toThrow(
      /No message matching \{ subject: "Never" \} arrived within 100 ms. Sent instead:\n {2}#1 to ada@example.org: "Later"/,
    );
    const aborted = new AbortController();
    aborted.abort(new Error('stopped'));
    await expect(waitForMessage(other, {}, { signal: aborted.signal })).rejects.toThrow('stopped');
    await other.close();
  });

  it('lastMessageTo and linksIn give the newest message to an address and its original links', () => {
    expect(lastMessageTo(mailbox, 'bob@example.org')?.subject).toBe('Second');
    expect(lastMessageTo(mailbox, 'nobody@example.org')).toBeUndefined();
    const invoice = lastMessageTo(mailbox, 'ada@example.org');
    expect(invoice?.html).toContain('/__sandbox/track/m/');
    expect(linksIn(invoice)).toEqual(['https://shop.example/invoice?id=7&x=1']);
    expect(linksIn('<a href=\'https://a.test/?q=1&amp;r=2\'>a</a> <A HREF="/b">b</A>')).toEqual([
      'https://a.test/?q=1&r=2',
      '/b',
    ]);
  });
});

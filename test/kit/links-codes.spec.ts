import {
  clickLink,
  codeIn,
  codesIn,
  emailMatchers,
  linkIn,
  linksIn,
  linksOf,
  waitForCode,
  waitForLink,
  type EmailMatchers,
  type SandboxSentMessage,
} from '../../lib/testing/index.js';
import { RawClient } from '../sandbox/sandbox.client.js';
import { useMailbox, useSandbox } from '../support/sandbox.js';
import { startScriptedServer, type ScriptedServer } from '../support/scripted-server.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace jest {
    // eslint-disable-next-line @typescript-eslint/no-empty-object-type
    interface Matchers<R> extends EmailMatchers<R> {}
  }
}
expect.extend(emailMatchers);

/** The message of a failed assertion (what a runner prints). */
function failure(assertion: () => void): string {
  try {
    assertion();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('the assertion passed');
}

const FROM = 'Shop <account@example.com>';

// What every sign-up, reset and login test does after "we sent it": the link or the code out of the mail.
// Messages as apps send them: html-only, text-only and both, look-alike (same sender, recipient and subject,
// different links and codes), over real HTTP to the sandbox.
describe('the test kit: links and codes out of a message', () => {
  const sandbox = useSandbox();
  const mailbox = useMailbox(sandbox, { tracking: { clicks: true, opens: true } });
  let client: RawClient;
  beforeEach(() => {
    client = new RawClient(() => mailbox);
  });
  afterEach(() => client.close());

  const send = async (body: Record<string, unknown>): Promise<SandboxSentMessage> => {
    const res = await client.send({
      from: FROM,
      to: ['ada@example.org'],
      subject: 'Reset your password',
      ...body,
    });
    expect(res.status).toBe(201);
    return mailbox.sent().find((m) => m.id === res.json.id) as SandboxSentMessage;
  };

  describe('links', () => {
    it("html only: each anchor with its text (tags and entities read, an image's alt), as the app wrote it before tracking", async () => {
      const mail = await send({
        html: [
          '<p>Hi Ada,</p>',
          '<p><a href="https://app.test/reset?token=t-1&amp;u=ada" class="btn"><b>Reset</b> your&nbsp;password</a></p>',
          '<a href=\'https://app.test/help\'><img src="x.png" alt="Help"></a>',
          '<a href="mailto:help@app.test">Write to us</a>',
          '<a name="top">no href</a>',
        ].join('\n'),
      });
      expect(mail.html).toContain('/__sandbox/track/'); // the delivered html is tracked ...
      expect(linksOf(mail)).toEqual([
        // ... and the links come back as their destinations
        { url: 'https://app.test/reset?token=t-1&u=ada', text: 'Reset your password', source: 'html' },
        { url: 'https://app.test/help', text: 'Help', source: 'html' },
        { url: 'mailto:help@app.test', text: 'Write to us', source: 'html' },
      ]);
      expect(linkIn(mail)).toBe('https://app.test/reset?token=t-1&u=ada');
      expect(linkIn(mail, { text: 'Help' })).toBe('https://app.test/help');
      expect(linkIn(mail, /^mailto:/)).toBe('mailto:help@app.test');
    });

    it('text only: the URLs written out, without the punctuation that ends their sentence', async () => {
      const mail = await send({
        text: 'Reset it here: https://app.test/reset?token=t-2. Or see (https://app.test/faq_(reset)).\nhttps://app.test/x,',
      });
      expect(linksOf(mail)).toEqual([
        { url: 'https://app.test/reset?token=t-2', text: null, source: 'text' },
        { url: 'https://app.test/faq_(reset)', text: null, source: 'text' },
        { url: 'https://app.test/x', text: null, source: 'text' },
      ]);
      expect(linksIn(mail)).toEqual([
        'https://app.test/reset?token=t-2',
        'https://app.test/faq_(reset)',
        'https://app.test/x',
      ]);
    });

    it("both: the html's anchors first, then the text's URLs the html did not give, each once", async () => {
      const mail = await send({
        html: '<a href="https://app.test/reset?token=t-3">Reset your password</a>',
        text: 'Reset: https://app.test/reset?token=t-3\nUnsubscribe: https://app.test/unsubscribe',
      });
      expect(linksOf(mail)).toEqual([
        { url: 'https://app.test/reset?token=t-3', text: 'Reset your password', source: 'html' },
        { url: 'https://app.test/unsubscribe', text: null, source: 'text' },
      ]);
      expect(linkIn(mail, 'unsubscribe')).toBe('https://app.test/unsubscribe');
    });

    it('says which links a message has when the one asked for is not there', async () => {
      const mail = await send({ html: '<a href="https://app.test/welcome">Start</a>', text: 'No link here' });
      expect(() => linkIn(mail, { text: 'Reset' })).toThrow(
        `The message #${mail.id} "Reset your password" has no link matching { text: "Reset" }. Its links:\n  https://app.test/welcome  "Start"`,
      );
      const plain = await send({ text: 'Nothing to click.' });
      expect(() => linkIn(plain)).toThrow(
        'has no link to a web page (http or https). Its links:\n  (no link)',
      );
      expect(() => linkIn(mail, { txt: 'Reset' } as never)).toThrow(
        'linkIn: the link has unknown "txt" (accepted: url, text)',
      );
      expect(() => linkIn(mail, { text: undefined })).toThrow(
        'linkIn: the link .text is undefined: leave it out, or give the value to check',
      );
    });
  });

  describe('codes', () => {
    it('finds the code of html-only, text-only and both, after a word such as "code" before any other number', async () => {
      const html = await send({
        subject: 'Your login code',
        html: '<p>Order #20931 is on its way. Your login code is <strong>482913</strong>.</p><p>© 2026 Shop</p>',
      });
      const text = await send({
        subject: 'Your login code',
        text: 'Hi Ada, 2026-11-23 10:30\nUse 7351 to sign in (verification code: 7351).\nhttps://app.test/x?otp=999999',
      });
      const both = await send({
        subject: 'Your login code',
        html: '<p>Your code: <b>660021</b></p>',
        text: 'Your code: 660021',
      });
      expect(codesIn(html)).toEqual(['482913', '2026']);
      expect(codeIn(html)).toBe('482913');
      expect(codesIn(text)).toEqual(['7351']); // a date, a time and a token in a link are no codes
      expect(codeIn(both)).toBe('660021');
      expect(codesIn(both)).toEqual(['660021']);
    });

    it("reads the app's own pattern (its first capture group when it has one)", async () => {
      const mail = await send({
        subject: 'Confirm your sign-in',
        text: 'Your code: KQX-204. Reference 123456 is not your code.',
        html: '<p>Your code: <code>KQX-204</code></p><p>Backup: ZZT-981</p>',
      });
      expect(codesIn(mail, { pattern: /\b[A-Z]{3}-\d{3}\b/ })).toEqual(['KQX-204', 'ZZT-981']);
      expect(codeIn(mail, { pattern: /Backup: (\w{3}-\d{3})/ })).toBe('ZZT-981');
      expect(codeIn(mail)).toBe('123456'); // the default reads digits only
      expect(() => codesIn(mail, { pattern: 'KQX' as never })).toThrow('codesIn: pattern must be a RegExp');
    });

    it('says where it looked when there is no code', async () => {
      const mail = await send({ subject: 'Welcome', text: 'No code in here, only 12 and 123.' });
      expect(() => codeIn(mail)).toThrow(
        `The message #${mail.id} "Welcome" has no code of 4 to 8 digits standing alone in its subject, text or html (links left out). Give your code's pattern: codeIn(message, { pattern: /.../ }).`,
      );
      expect(() => codeIn(mail, { pattern: /[A-Z]{6}/ })).toThrow('has no code matching /[A-Z]{6}/');
    });
  });

  describe('matchers', () => {
    it('toHaveSentLink and toHaveSentCode find the message among look-alikes, and list links and codes when not', async () => {
      await send({ html: '<a href="https://app.test/welcome">Start</a>', subject: 'Welcome' });
      await send({ text: 'Reset: https://app.test/reset?token=t-9' });
      await send({ subject: 'Your login code', text: 'Your code is 913370' });
      expect(mailbox).toHaveSentLink(/\/reset\?token=/, {
        to: 'ada@example.org',
        subject: 'Reset your password',
      });
      expect(mailbox).toHaveSentLink({ text: 'Start' });
      expect(mailbox).toHaveSentLink(expect.objectContaining({ source: 'text' }), { subject: /reset/i });
      expect(mailbox).not.toHaveSentLink(/\/reset/, { subject: 'Welcome' });
      expect(mailbox).toHaveSentCode({ to: 'ada@example.org' });
      expect(mailbox).toHaveSentCode({ code: expect.stringMatching(/^\d{6}$/), subject: 'Your login code' });
      expect(mailbox).not.toHaveSentCode({ subject: 'Welcome' });
      expect(mailbox).toHaveSentTimes(1, { link: 'token=t-9', to: 'ada@example.org' });
      expect(mailbox).toHaveSentTimes(0, { link: 'token=t-9', code: true });

      expect(failure(() => expect(mailbox).toHaveSentLink({ text: 'Confirm' }))).toContain(
        'Expected a message with a link matching { text: "Confirm" }, but none was. Sent instead:\n' +
          '  #1 to ada@example.org: "Welcome"  <- no link like { text: "Confirm" } (links: https://app.test/welcome)\n' +
          '  #2 to ada@example.org: "Reset your password"  <- no link like { text: "Confirm" } (links: https://app.test/reset?token=t-9)\n' +
          '  #3 to ada@example.org: "Your login code"  <- no link',
      );
      expect(failure(() => expect(mailbox).toHaveSentCode({ code: '000000' }))).toContain(
        '#3 to ada@example.org: "Your login code"  <- no code like "000000" (codes: 913370)',
      );
    });

    it('refuses link and code criteria it cannot check, naming them', () => {
      expect(() => expect(mailbox).toHaveSentLink({ to: 'ada@example.org' } as never)).toThrow(
        'toHaveSentLink: the link has unknown "to" (accepted: url, text)',
      );
      expect(() => expect(mailbox).toHaveSentLink('x', { link: 'y' })).toThrow(
        'toHaveSentLink: give the link as its first argument, not as a link criterion',
      );
      expect(() => expect(mailbox).toHaveSent({ code: 42 as never })).toThrow(
        'code must be true (any code), a string, a RegExp or an asymmetric matcher (got 42)',
      );
      expect(() => expect(mailbox).toHaveSent({ codePattern: '\\d+' as never })).toThrow(
        'codePattern must be a RegExp',
      );
      expect(() => expect(mailbox).toHaveSent({ link: {} })).toThrow('link is empty: give url or text');
    });

    it('toContainLink and toContainCode read one message, and send a mailbox to the other matchers', async () => {
      const mail = await send({
        subject: 'Your login code',
        html: '<p>Your code is <b>5521</b>. <a href="https://app.test/login?c=5521">Sign in</a></p>',
      });
      expect(mail).toContainLink({ text: 'Sign in', url: /c=5521$/ });
      expect(mail).toContainLink();
      expect(mail).not.toContainLink('/reset');
      expect(mail).toContainCode('5521');
      expect(mail).toContainCode(/^\d{4}$/);
      expect(mail).not.toContainCode('5522');
      expect(mail).not.toContainCode(undefined, { pattern: /[A-Z]{3}-\d{3}/ });
      expect(failure(() => expect(mail).toContainLink({ text: 'Reset' }))).toBe(
        `Expected the message #${mail.id} "Your login code" to contain a link matching { text: "Reset" }. Its links:\n  https://app.test/login?c=5521  "Sign in"`,
      );
      expect(failure(() => expect(mail).not.toContainCode())).toBe(
        `Expected the message #${mail.id} "Your login code" to have no code, but it has 5521`,
      );
      expect(() => expect(mailbox).toContainLink()).toThrow(
        'toContainLink reads one message, such as one of mailbox.sent() or what waitForMessage gives; for a mailbox, write expect(mailbox).toHaveSentLink(link, match)',
      );
    });
  });

  describe('waiting', () => {
    it('waitForLink: "wait for the reset mail to Ada and give me its link" in one line, past look-alikes that come first', async () => {
      const waiting = waitForLink(mailbox, { to: 'ada@example.org', link: { text: 'Reset your password' } });
      await send({
        subject: 'Reset your password',
        to: ['bob@example.org'],
        html: '<a href="https://app.test/r?t=bob">Reset your password</a>',
      });
      await send({ subject: 'Reset your password', html: '<a href="https://app.test/welcome">Start</a>' });
      await send({
        subject: 'Reset your password',
        html: '<a href="https://app.test/r?t=ada">Reset your password</a>',
      });
      await expect(waiting).resolves.toBe('https://app.test/r?t=ada');
      await expect(waitForLink(mailbox, { to: 'bob@example.org' })).resolves.toBe('https://app.test/r?t=bob');
    });

    it("waitForCode gives the code, with the app's pattern too; a timeout lists what came instead", async () => {
      const waiting = waitForCode(mailbox, { to: 'ada@example.org', subject: 'Your login code' });
      await send({ subject: 'Welcome', text: 'Welcome aboard.' });
      await send({ subject: 'Your login code', text: 'Your code is 240117' });
      await expect(waiting).resolves.toBe('240117');
      await send({ subject: 'Your login code', text: 'Your code is QXR-771' });
      await expect(
        waitForCode(mailbox, { subject: 'Your login code', codePattern: /\b[A-Z]{3}-\d{3}\b/ }),
      ).resolves.toBe('QXR-771');
      await expect(waitForCode(mailbox, { subject: 'Welcome' }, { timeoutMs: 200 })).rejects.toThrow(
        /No message matching \{ subject: "Welcome", code: true \} arrived within 200 ms\. Sent instead:\n.*"Welcome" {2}<- no code/,
      );
      await expect(waitForLink(mailbox, { sbject: 'x' } as never)).rejects.toThrow(
        'waitForLink: unknown criterion "sbject"',
      );
    });
  });

  describe('clickLink', () => {
    let app: ScriptedServer;
    beforeAll(async () => {
      app = await startScriptedServer((req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(`confirmed ${new URL(req.url, 'http://x').searchParams.get('token')}`);
      });
    });
    afterAll(() => app.close());

    it('clicks a tracked link through the sandbox to its destination: the click is recorded, the app answers', async () => {
      const mail = await send({
        subject: 'Confirm your address',
        html: `<p><a href="${app.url}/other">Other</a> <a href="${app.url}/confirm?token=c-1&amp;x=1">Confirm your address</a></p>`,
      });
      const click = await clickLink(
        mail,
        { text: 'Confirm your address' },
        { headers: { cookie: 'session=s1' } },
      );
      expect(click.url).toBe(`${app.url}/confirm?token=c-1&x=1`);
      expect(click.tracked).toBe(true);
      expect(click.response?.status).toBe(200);
      expect(await click.response?.text()).toBe('confirmed c-1');
      expect(app.requests.map((r) => [r.url, r.headers.cookie])).toEqual([
        ['/confirm?token=c-1&x=1', 'session=s1'],
      ]);
      expect(mailbox.events(mail.id)).toEqual([
        expect.objectContaining({ type: 'click', url: `${app.url}/confirm?token=c-1&x=1` }),
      ]);
      expect(mailbox.sent().find((m) => m.id === mail.id)?.clickCount).toBe(1);
    });

    it("follow: false stops at the sandbox's redirect; an untracked link is fetched directly", async () => {
      const mail = await send({ html: `<a href="${app.url}/confirm?token=c-2">Confirm</a>` });
      const before = app.requests.length;
      const hop = await clickLink(mail, undefined, { follow: false });
      expect([hop.tracked, hop.response?.status, hop.response?.headers.get('location')]).toEqual([
        true,
        302,
        `${app.url}/confirm?token=c-2`,
      ]);
      await hop.response?.body?.cancel();
      expect(app.requests.length).toBe(before);
      expect(mailbox.events(mail.id)).toHaveLength(1);

      const untracked = sandbox.mailbox({ tracking: { clicks: false } });
      try {
        const own = new RawClient(() => untracked);
        await own.send({
          from: FROM,
          to: ['ada@example.org'],
          subject: 'x',
          text: `Go: ${app.url}/confirm?token=c-3.`,
        });
        await own.close();
        const direct = await clickLink(untracked.sent()[0]);
        expect([direct.tracked, await direct.response?.text()]).toEqual([false, 'confirmed c-3']);
      } finally {
        await untracked.close();
      }
    });

    it('says so when the sandbox no longer knows the message (reset)', async () => {
      const mail = await send({ html: `<a href="${app.url}/confirm?token=c-4">Confirm</a>` });
      mailbox.reset();
      await expect(clickLink(mail)).rejects.toThrow(
        `The sandbox did not redirect the tracked link of ${app.url}/confirm?token=c-4 (answered 404: {"error":"unknown tracking link"}); was the message reset or forgotten?`,
      );
    });
  });
});

import { request } from 'undici';
import {
  RemoteSandboxMailbox,
  emailMatchers,
  waitForMessage,
  type EmailMatchers,
} from '../../lib/testing/index.js';
import { inline, RawClient } from './sandbox.client.js';
import { useSandbox } from '../support/sandbox.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace jest {
    // eslint-disable-next-line @typescript-eslint/no-empty-object-type
    interface Matchers<R> extends EmailMatchers<R> {}
  }
}
expect.extend(emailMatchers);

// One sandbox for a whole test run lives in the runner's globalSetup process; each test file makes its
// mailbox over HTTP. Here the sandbox is in this process, but everything below goes over loopback HTTP.
describe('RemoteSandboxMailbox: mailboxes of a sandbox in another process', () => {
  const sandbox = useSandbox({ basePath: '/api' });
  const client = new RawClient(() => sandbox);

  afterAll(async () => {
    await client.close();
  });

  it('makes isolated mailboxes over HTTP, reads their messages and closes them', async () => {
    const [a, b] = await Promise.all([
      RemoteSandboxMailbox.create(sandbox.baseUrl, { domains: ['shop.test'], name: 'file-a' }),
      RemoteSandboxMailbox.create(sandbox.baseUrl),
    ]);
    expect(a.env()).toEqual({ EMAIL_API_KEY: a.apiKey, EMAIL_BASE_URL: sandbox.baseUrl });
    expect(sandbox.mailboxes()).toEqual(['default', 'file-a', b.name]);
    const pdf = Buffer.from('%PDF');
    await client.send(
      inline({
        from: 'x@shop.test',
        subject: 'For A',
        attachments: [{ filename: 'a.pdf', content: pdf.toString('base64') }],
      }),
      { key: a.apiKey },
    );
    await client.send(inline({ subject: 'For B' }), { key: b.apiKey });
    const sentA = await a.sent();
    expect(sentA).toHaveSentTimes(1);
    expect(sentA).toHaveSent({ subject: 'For A', attachments: [{ filename: 'a.pdf', content: pdf }] });
    expect(await b.sent()).not.toHaveSent({ subject: 'For A' });
    await expect(waitForMessage(b, { subject: 'For B' })).resolves.toMatchObject({ id: 1 });
    await a.close();
    expect((await client.send(inline({ from: 'x@shop.test' }), { key: a.apiKey })).status).toBe(401);
    await expect(a.sent()).rejects.toThrow(/answered 404: the sandbox has no mailbox named file-a/);
    await b.close();
  });

  it('refuses bad options with 400, and a foreign origin with 403', async () => {
    await expect(RemoteSandboxMailbox.create(sandbox.baseUrl, { plan: 'pro' as 'free' })).rejects.toThrow(
      /answered 400: plan must be free or growth/,
    );
    await expect(RemoteSandboxMailbox.create(sandbox.baseUrl, { name: 'default' })).rejects.toThrow(/400/);
    const res = await request(`${sandbox.baseUrl}/__sandbox/mailboxes`, {
      method: 'POST',
      headers: { origin: 'http://evil.test', 'content-type': 'application/json' },
      body: '{}',
    });
    await res.body.dump();
    expect(res.statusCode).toBe(403);
    expect(sandbox.mailboxes()).toEqual(['default']);
  });
});

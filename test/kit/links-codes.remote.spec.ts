import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  EmailSandbox,
  RemoteSandboxMailbox,
  clickLink,
  emailMatchers,
  waitForCode,
  waitForLink,
  type EmailMatchers,
} from '../../lib/testing/index.js';
import { parseSandboxCli } from '../../lib/testing/sandbox.cli-options.js';
import { RawClient } from '../sandbox/sandbox.client.js';
import { startScriptedServer, type ScriptedServer } from '../support/scripted-server.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace jest {
    // eslint-disable-next-line @typescript-eslint/no-empty-object-type
    interface Matchers<R> extends EmailMatchers<R> {}
  }
}
expect.extend(emailMatchers);

// The links and codes of a mailbox in another process, as a test run with one sandbox in its globalSetup
// reaches it (`RemoteSandboxMailbox`, over HTTP), on a sandbox that keeps its mail on disk (the CLI's
// `--data`): the helpers, the matchers (on `await mailbox.sent()`) and the click, before and after the
// sandbox restarts. Own sandboxes (not useSandbox): one is stopped and a second started on its data.
describe('the test kit on a remote mailbox of a sandbox with --data', () => {
  let dir: string;
  let sandbox: EmailSandbox | undefined;
  let app: ScriptedServer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'email-kit-remote-'));
    app = await startScriptedServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`reset page for ${new URL(req.url, 'http://x').searchParams.get('token')}`);
    });
  });
  afterAll(async () => {
    await sandbox?.close();
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('waits for, matches and clicks links and codes, and still does once the sandbox restarted on its data', async () => {
    const options = (port: number) => parseSandboxCli(['--data', dir, '--port', String(port)]).options;
    sandbox = await EmailSandbox.start(options(0));
    const port = Number(new URL(sandbox.baseUrl).port);
    const remote = await RemoteSandboxMailbox.create(sandbox.baseUrl, {
      name: 'signup',
      tracking: { clicks: true },
    });
    const client = new RawClient(() => remote);
    try {
      const mail = { from: 'account@example.com', to: ['ada@example.org'] };
      const link = `${app.url}/reset?token=r-77`;
      const waitingLink = waitForLink(remote, { to: 'ada@example.org', subject: /reset/i });
      const waitingCode = waitForCode(remote, { to: 'ada@example.org', subject: 'Your login code' });
      await client.send({ ...mail, subject: 'Welcome', html: `<a href="${app.url}/start">Start</a>` });
      await client.send({
        ...mail,
        subject: 'Reset your password',
        html: `<p><a href="${link}">Reset your password</a></p>`,
        text: `Reset it: ${link}`,
      });
      await client.send({ ...mail, subject: 'Your login code', text: 'Your code is 731905.' });
      await expect(waitingLink).resolves.toBe(link);
      await expect(waitingCode).resolves.toBe('731905');

      const sent = await remote.sent();
      expect(sent).toHaveSentLink(
        { text: 'Reset your password', url: 'token=r-77' },
        { to: 'ada@example.org' },
      );
      expect(sent).toHaveSentCode({ subject: 'Your login code', code: '731905' });
      expect(sent).not.toHaveSentCode({ subject: 'Welcome' });
      const reset = sent.find((m) => m.subject === 'Reset your password')!;
      expect(reset).toContainLink({ text: 'Reset your password' });
      const click = await clickLink(reset, { text: 'Reset your password' });
      expect([click.tracked, await click.response?.text()]).toEqual([true, 'reset page for r-77']);
      expect((await remote.sent()).find((m) => m.id === reset.id)?.clickCount).toBe(1);

      await sandbox.close();
      sandbox = await EmailSandbox.start(options(port));
      // The same remote mailbox (its name, the same address): its mail came back from the data directory.
      const again = await remote.sent();
      expect(again.map((m) => m.subject)).toEqual(['Welcome', 'Reset your password', 'Your login code']);
      await expect(waitForCode(remote, { subject: 'Your login code' }, { timeoutMs: 1000 })).resolves.toBe(
        '731905',
      );
      expect(again).toHaveSentLink(/\/reset\?token=r-77$/);
      const restored = again.find((m) => m.subject === 'Reset your password')!;
      const second = await clickLink(restored);
      expect([second.tracked, await second.response?.text()]).toEqual([true, 'reset page for r-77']);
      expect((await remote.sent()).find((m) => m.id === reset.id)?.clickCount).toBe(2);
      expect(app.requests.map((r) => r.url)).toEqual(['/reset?token=r-77', '/reset?token=r-77']);
    } finally {
      await client.close();
    }
  });
});

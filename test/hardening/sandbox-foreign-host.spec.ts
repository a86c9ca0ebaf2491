import { EmailSandbox } from '../../lib/testing/index.js';
import { hostRequest } from '../sandbox/sandbox.client.js';
import { parseSandboxCli, SANDBOX_CLI_KEY } from '../../lib/testing/sandbox.cli-options.js';

/**
 * Issue 36: a web page reaches a sandbox on a fixed port with a published key through a DNS name it
 * rebinds to 127.0.0.1 (its requests carry its own `Host`), or by a cross-site write (its `Origin`).
 * Every route refuses both; a name the user allowed (`allowedHosts`, `--allowed-host`) is answered.
 */
const raw = hostRequest;

const MAIL = JSON.stringify({
  from: 'app@example.com',
  to: ['ada@example.com'],
  subject: 'Reset your password',
  html: '<p>Your reset token: RESET-TOKEN-42</p>',
});

describe('the sandbox refuses foreign hosts and cross-site writes on every route (issue 36)', () => {
  let sandbox: EmailSandbox;
  let port: number;
  const auth = { authorization: `Bearer ${SANDBOX_CLI_KEY}`, 'content-type': 'application/json' };

  beforeAll(async () => {
    // The CLI's own options (its published key), on a free port.
    sandbox = await EmailSandbox.start({ ...parseSandboxCli(['--port', '0']).options });
    port = sandbox.port;
    const created = await raw(port, 'POST', '/emails', { ...auth, host: `127.0.0.1:${port}` }, MAIL);
    expect(created.status).toBe(201);
  });
  afterAll(() => sandbox.close());

  const foreign = () => ({ host: `evil.example:${port}` });

  it.each([
    ['GET', '/emails'],
    ['GET', '/emails/1'],
    ['GET', '/emails/1/events'],
    ['POST', '/emails'],
    ['POST', '/emails/batch'],
    ['GET', '/__sandbox/stats'],
    ['GET', '/__sandbox/mailboxes'],
    ['GET', '/__sandbox/track/open/1'],
    ['POST', '/__sandbox/reset'],
  ])('%s %s with a rebound Host is 403, and shows no mail', async (method, path) => {
    const body = method === 'POST' ? (path === '/emails/batch' ? `[${MAIL}]` : MAIL) : undefined;
    const answer = await raw(port, method, path, { ...auth, ...foreign() }, body);
    expect(answer.status).toBe(403);
    expect(answer.body).toContain('evil.example');
    expect(answer.body).not.toContain('RESET-TOKEN-42');
    expect(sandbox.messages()).toHaveLength(1);
  });

  it('a write with a cross-site Origin is 403 even with a loopback Host; the same from the sandbox itself is served', async () => {
    const host = `127.0.0.1:${port}`;
    const crossSite = await raw(
      port,
      'POST',
      '/emails',
      { ...auth, host, origin: 'https://evil.example' },
      MAIL,
    );
    expect(crossSite.status).toBe(403);
    expect(crossSite.body).toContain('Origin https://evil.example');
    const nullOrigin = await raw(port, 'POST', '/emails', { ...auth, host, origin: 'null' }, MAIL);
    expect(nullOrigin.status).toBe(403);
    expect(sandbox.messages()).toHaveLength(1);
    const own = await raw(
      port,
      'POST',
      '/emails',
      { ...auth, host, origin: `http://localhost:${port}` },
      MAIL,
    );
    expect(own.status).toBe(201);
    expect(sandbox.messages()).toHaveLength(2);
  });

  it('loopback names and addresses are answered', async () => {
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `[::1]:${port}`,
      `app.localhost:${port}`,
      '127.0.0.1',
    ]) {
      expect({ host, status: (await raw(port, 'GET', '/emails/1', { ...auth, host })).status }).toEqual({
        host,
        status: 200,
      });
    }
  });

  it('a look-alike of a loopback name is refused', async () => {
    for (const host of [
      `127.0.0.1.evil.example:${port}`,
      `localhost.evil.example:${port}`,
      `evil-localhost:${port}`,
    ]) {
      expect({ host, status: (await raw(port, 'GET', '/emails/1', { ...auth, host })).status }).toEqual({
        host,
        status: 403,
      });
    }
  });

  describe('allowedHosts (--allowed-host)', () => {
    let allowed: EmailSandbox;
    beforeAll(async () => {
      const cli = parseSandboxCli([
        '--port',
        '0',
        '--allowed-host',
        'email-sandbox',
        '--allowed-host',
        'mail.internal:8025',
      ]);
      expect(cli.options.allowedHosts).toEqual(['email-sandbox', 'mail.internal:8025']);
      allowed = await EmailSandbox.start(cli.options);
    });
    afterAll(() => allowed.close());

    it('answers a name the user allowed (any port, or the port given), and still refuses others', async () => {
      const p = allowed.port;
      const get = (host: string) => raw(p, 'GET', '/emails', { ...auth, host }).then((a) => a.status);
      expect(await get(`email-sandbox:${p}`)).toBe(200);
      expect(await get('EMAIL-SANDBOX')).toBe(200);
      expect(await get('mail.internal:8025')).toBe(200);
      expect(await get(`mail.internal:${p}`)).toBe(403);
      expect(await get(`evil.example:${p}`)).toBe(403);
      const write = await raw(
        p,
        'POST',
        '/emails',
        { ...auth, host: `email-sandbox:${p}`, origin: `http://email-sandbox:${p}` },
        MAIL,
      );
      expect(write.status).toBe(201);
    });

    it('refuses an entry that is not a host name, naming it', async () => {
      expect(() => parseSandboxCli(['--allowed-host', 'http://evil.example/'])).toThrow(
        /"http:\/\/evil\.example\/" is not a host name/,
      );
      await expect(EmailSandbox.start({ allowedHosts: ['ok.example', 'a b'] })).rejects.toThrow(
        /allowedHosts: "a b" is not a host name/,
      );
    });
  });
});

import { EmailSandbox } from '../../lib/testing/index.js';
import { hostRequest } from './sandbox.client.js';

/**
 * Issue 50, item 12: one Host rule for every route of the sandbox. Every loopback name or address the
 * contract routes accept (127.0.0.0/8, `localhost` and any subdomain of it, `[::1]`) and every name of
 * `allowedHosts` reach the outbox page and the admin API too; a foreign Host is refused on all of them.
 * On the code before the fix, the page and admin routes ran a second, narrower host check that ignored
 * `allowedHosts`: `127.0.0.2`, `a.b.localhost` and an allowed container alias got 403 there.
 */
const raw = hostRequest;

const KEY = 'sk_test_one_host_rule_0123456789';
const MAIL = JSON.stringify({
  from: 'app@example.com',
  to: ['ada@example.com'],
  subject: 'Hi',
  text: 'hello',
});

let sandbox: EmailSandbox;
let port: number;
beforeAll(async () => {
  sandbox = await EmailSandbox.start({ keys: [KEY], allowedHosts: ['email-sandbox', 'mail.internal:8025'] });
  port = sandbox.port;
});
afterAll(() => sandbox.close());

/** Every kind of route: the contract's, the page, its assets, the admin API, the mailboxes' API. */
const ROUTES: Array<[string, string]> = [
  ['GET', '/emails'],
  ['POST', '/emails'],
  ['GET', '/__sandbox/outbox/'],
  ['GET', '/__sandbox/outbox/api/messages'],
  ['GET', '/__sandbox/stats'],
  ['GET', '/__sandbox/mailboxes/default/sent'],
  ['POST', '/__sandbox/reset'],
];

const allowed = () => [
  `127.0.0.2:${port}`,
  `127.1.2.3:${port}`,
  `a.b.localhost:${port}`,
  `app.localhost:${port}`,
  `[::1]:${port}`,
  `email-sandbox:${port}`,
  'email-sandbox',
  'mail.internal:8025',
];

describe('one Host rule for every route of the sandbox (issue 50, item 12)', () => {
  it('every Host the contract routes answer reaches the page and the admin API as well', async () => {
    const refused: string[] = [];
    for (const host of allowed())
      for (const [method, path] of ROUTES) {
        const headers = { host, authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
        const answer = await raw(port, method, path, headers, method === 'POST' ? MAIL : undefined);
        if (answer.status === 403) refused.push(`${host} ${method} ${path}: ${answer.body}`);
        else expect({ host, path, status: answer.status }).not.toMatchObject({ status: 404 });
      }
    expect(refused).toEqual([]);
  });

  it('a foreign Host is refused on every route alike, naming the rule once', async () => {
    for (const host of [`evil.example:${port}`, `mail.internal:${port}`, `127.0.0.1.evil.example:${port}`])
      for (const [method, path] of ROUTES) {
        const answer = await raw(port, method, path, { host, authorization: `Bearer ${KEY}` });
        expect({ host, method, path, status: answer.status }).toEqual({ host, method, path, status: 403 });
        expect(answer.body).toContain('allowedHosts');
      }
  });

  it("the page's writes through an allowed name: its own origin is served, another origin is not", async () => {
    const host = `email-sandbox:${port}`;
    const own = await raw(port, 'POST', '/__sandbox/reset', { host, origin: `http://${host}` });
    expect(own.status).toBe(204);
    const other = await raw(port, 'POST', '/__sandbox/reset', { host, origin: `http://localhost:${port}` });
    expect(other.status).toBe(403);
    const site = await raw(port, 'POST', '/__sandbox/reset', { host, 'sec-fetch-site': 'cross-site' });
    expect(site.status).toBe(403);
  });
});

/// <reference lib="dom" />
import type { Browser } from 'playwright-core';
import { request } from 'undici';
import { EmailSandbox } from '../../lib/testing/index.js';
import { inline, RawClient } from '../sandbox/sandbox.client.js';
import { startScriptedServer, type ScriptedServer } from '../support/scripted-server.js';
import { launchChromium } from './page.browser.js';

/** Every route that changes the sandbox, with a body that would work from the page itself. */
const CHANGES: Array<[path: string, body: unknown]> = [
  ['/__sandbox/reset', {}],
  ['/__sandbox/outbox/api/clock', { advanceMs: 86_400_000 }],
  ['/__sandbox/outbox/api/faults', { mode: 'status', status: 503, times: 'all' }],
  ['/__sandbox/outbox/api/faults/clear', {}],
  ['/__sandbox/outbox/api/messages/1/open', {}],
  ['/__sandbox/outbox/api/messages/1/click', {}],
  ['/__sandbox/outbox/api/messages/1/delete', {}],
  ['/__sandbox/outbox/api/messages/clear', {}],
  ['/__sandbox/outbox/api/reset', {}],
  ['/__sandbox/mailboxes', {}],
];

describe('the sandbox page and admin routes refuse other origins', () => {
  let sandbox: EmailSandbox;
  const client = new RawClient(() => sandbox);

  /** What a refused request must leave untouched. */
  const snapshot = () => {
    const [m] = sandbox.messages();
    return {
      messages: sandbox.messages().length,
      opens: m?.openCount,
      clicks: m?.clickCount,
      faults: sandbox.faults.active().rules.length,
      mailboxes: sandbox.mailboxes().length,
      clockNearNow: Math.abs(sandbox.clock.now() - Date.now()) < 60_000,
    };
  };
  const post = (path: string, body: unknown, headers: Record<string, string>) =>
    client.call('POST', path, {
      body,
      headers: { 'content-type': 'application/json', ...headers },
      key: null,
    });

  beforeAll(async () => {
    sandbox = await EmailSandbox.start({ tracking: { opens: true, clicks: true } });
  });
  beforeEach(async () => {
    sandbox.reset();
    await client.send(inline({ html: '<a href="https://shop.example/x">x</a>' }));
    sandbox.faults.add({ route: 'GET /emails/:id', mode: 'status', status: 500, times: 5 });
  });
  afterAll(async () => {
    await Promise.all([sandbox?.close(), client.close()]);
  });

  const foreign: Array<[string, Record<string, string>]> = [
    ['another site', { origin: 'http://evil.test' }],
    ['another port on loopback', { origin: 'http://127.0.0.1:1' }],
    ['a sandboxed frame (Origin null)', { origin: 'null' }],
    ['Sec-Fetch-Site cross-site', { 'sec-fetch-site': 'cross-site' }],
    ['Sec-Fetch-Site same-site', { 'sec-fetch-site': 'same-site' }],
  ];

  it.each(foreign)('refuses every state-changing route from %s with 403', async (_name, headers) => {
    const before = snapshot();
    for (const [path, body] of CHANGES) {
      const res = await post(path, body, headers);
      expect([path, res.status]).toEqual([path, 403]);
      expect(res.json.error).toMatch(/cross-origin request refused/);
    }
    expect(snapshot()).toEqual(before);
  });

  it('serves the same routes to the page itself and to clients that send no Origin', async () => {
    const self = { origin: new URL(sandbox.baseUrl).origin, 'sec-fetch-site': 'same-origin' };
    expect((await post('/__sandbox/outbox/api/messages/1/open', {}, self)).status).toBe(201);
    expect((await post('/__sandbox/outbox/api/messages/1/click', {}, {})).status).toBe(201);
    expect((await post('/__sandbox/outbox/api/faults/clear', {}, self)).status).toBe(200);
    expect(sandbox.faults.active().rules).toEqual([]);
    expect((await post('/__sandbox/reset', {}, {})).status).toBe(204);
  });

  it('refuses a host name that is not loopback (DNS rebinding), even for reads', async () => {
    for (const path of ['/__sandbox/outbox/', '/__sandbox/outbox/api/messages', '/__sandbox/stats']) {
      const res = await request(sandbox.baseUrl + path, { headers: { host: 'evil.test' } });
      expect([path, res.statusCode]).toEqual([path, 403]);
      expect(await res.body.text()).toContain('host \\"evil.test\\" refused');
    }
  });

  it('asks for JSON on its own actions', async () => {
    const res = await client.call('POST', '/__sandbox/outbox/api/faults/clear', {
      body: 'x',
      headers: { 'content-type': 'text/plain' },
    });
    expect(res.status).toBe(415);
    expect(sandbox.faults.active().rules).toHaveLength(1);
  });

  it('serves the page with a strict policy and a message html with a sandboxing one', async () => {
    const page = await request(sandbox.uiUrl as string);
    const csp = String(page.headers['content-security-policy']);
    await page.body.dump();
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("frame-ancestors 'none'");
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    const html = await request(`${sandbox.uiUrl}api/messages/1/html`);
    await html.body.dump();
    expect(String(html.headers['content-security-policy'])).toMatch(/^sandbox; default-src 'none'/);
    const images = await request(`${sandbox.uiUrl}api/messages/1/html?images=1`);
    await images.body.dump();
    const imagesCsp = String(images.headers['content-security-policy']);
    expect(imagesCsp).toMatch(/^sandbox; default-src 'none'/);
    expect(imagesCsp).toContain('img-src data: http: https:');
    expect(imagesCsp).not.toMatch(/allow-scripts|script-src/);
  });

  describe('from a page of another origin in Chromium', () => {
    let browser: Browser;
    let attacker: ScriptedServer;
    let attackerUrl = '';

    beforeAll(async () => {
      browser = await launchChromium();
      attacker = await startScriptedServer((_req, res) => {
        res.setHeader('content-type', 'text/html');
        res.end('<!doctype html><title>elsewhere</title>');
      });
      attackerUrl = `${attacker.url}/`;
    });
    afterAll(async () => {
      await browser?.close();
      await attacker?.close();
    });

    it('cannot change anything with fetch or a form post', async () => {
      const page = await browser.newPage();
      await page.goto(attackerUrl);
      const before = snapshot();
      const targets = CHANGES.map(([path, body]) => [sandbox.baseUrl + path, JSON.stringify(body)]);
      const statuses = await page.evaluate(async (list) => {
        const out: string[] = [];
        for (const [url, body] of list) {
          await fetch(url, {
            method: 'POST',
            mode: 'no-cors',
            body,
            headers: { 'content-type': 'text/plain' },
          });
          const cors = await fetch(url, {
            method: 'POST',
            body,
            headers: { 'content-type': 'application/json' },
          })
            .then((r) => String(r.status))
            .catch(() => 'blocked');
          out.push(cors);
        }
        return out;
      }, targets);
      expect(statuses.every((s) => s === 'blocked')).toBe(true);
      for (const [url] of targets) {
        await page.evaluate((action) => {
          const form = document.createElement('form');
          form.method = 'POST';
          form.action = action;
          form.enctype = 'text/plain';
          document.body.append(form);
          form.submit();
        }, url);
        await page.waitForLoadState('load');
        expect(await page.textContent('body')).toContain('cross-origin request refused');
        await page.goto(attackerUrl);
      }
      expect(snapshot()).toEqual(before);
      await page.close();
    });
  });
});

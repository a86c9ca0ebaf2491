/// <reference lib="dom" />
import type { Browser, Page } from 'playwright-core';
import { EmailSandbox } from '../../lib/testing/index.js';
import { inline, RawClient } from '../sandbox/sandbox.client.js';
import { startScriptedServer, type ScriptedServer } from '../support/scripted-server.js';
import { launchChromium } from './page.browser.js';

// The page's views added with the test kit: mailboxes, raw request and html source, full dates, delete
// and clear, remote images, device widths, and why tracking does not apply.
describe('the sandbox page views in Chromium', () => {
  let sandbox: EmailSandbox;
  let browser: Browser;
  let page: Page;
  let dialogs: string[];
  const client = new RawClient(() => sandbox);
  // A server elsewhere on loopback that records every request (remote images point at it).
  let spy: ScriptedServer;

  const row = (subject: string) =>
    page.locator('.row', { has: page.locator('.subject', { hasText: subject }) });
  const open = async (subject: string) => {
    await row(subject).click();
    await page.locator('#d-subject', { hasText: subject }).waitFor();
  };

  beforeAll(async () => {
    spy = await startScriptedServer((_req, res) => void res.end('x'));
    [sandbox, browser] = await Promise.all([
      EmailSandbox.start({ tracking: { opens: true, clicks: true } }),
      launchChromium(),
    ]);
  });
  beforeEach(async () => {
    sandbox.reset();
    spy.requests.length = 0;
    dialogs = [];
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.accept();
    });
    await page.goto(sandbox.uiUrl as string);
  });
  afterEach(() => page.close());
  afterAll(async () => {
    await Promise.all([browser?.close(), sandbox?.close(), client.close()]);
    await spy?.close();
  });

  it('switches between mailboxes and shows only the chosen one', async () => {
    const a = sandbox.mailbox({ name: 'orders' });
    const b = sandbox.mailbox({ name: 'signups' });
    await client.send(inline({ subject: 'Order 1' }), { key: a.apiKey });
    await client.send(inline({ subject: 'Signup 1' }), { key: b.apiKey });
    await client.send(inline({ subject: 'Default 1' }));
    await row('Default 1').waitFor();
    await page.locator('#mailbox-picker').waitFor();
    expect(await page.locator('#mailbox option').allTextContents()).toEqual([
      'default (1 message)',
      'orders (1 message)',
      'signups (1 message)',
    ]);
    await page.selectOption('#mailbox', 'orders');
    await row('Order 1').waitFor();
    expect(await page.locator('.row .subject').allTextContents()).toEqual(['Order 1']);
    expect(new URL(page.url()).searchParams.get('mailbox')).toBe('orders');
    // Id 1 exists in both mailboxes: the page opens the chosen mailbox's.
    await open('Order 1');
    await page.selectOption('#mailbox', 'signups');
    await row('Signup 1').waitFor();
    await open('Signup 1');
    expect(await page.locator('.row .subject').allTextContents()).toEqual(['Signup 1']);
    await a.close();
    await b.close();
  });

  it('shows the raw request and the html source as text, never as markup', async () => {
    const subject = `<img src=x onerror="window.__pwned='raw'"> & <b>bold</b>`;
    const html = `<p id="p">Hi</p><script>parent.__pwned='source'</script><img src="x" onerror="parent.__pwned='img'">`;
    await client.send(inline({ subject, html }), { idempotencyKey: 'raw-view-key-0000001' });
    await open(subject);
    const raw = page.locator('#d-raw-json');
    await raw.filter({ hasText: 'POST /emails' }).waitFor();
    const rawText = (await raw.textContent()) as string;
    expect(rawText).toContain('Authorization: Bearer ***');
    expect(rawText).toContain('Idempotency-Key: raw-view-key-0000001');
    expect(rawText).toContain(`"subject": ${JSON.stringify(subject)}`);
    expect(rawText).not.toContain(sandbox.apiKey);
    await page.click('button[data-group=view][data-value=source]');
    const source = page.locator('#d-source');
    await source.filter({ hasText: '<script>' }).waitFor();
    expect(await source.textContent()).toContain(`<script>parent.__pwned='source'</script>`);
    expect(await page.locator('#d-html iframe').count()).toBe(0);
    expect(await page.locator('#detail b, #detail script, #detail img').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned)).toBeUndefined();
    expect(dialogs).toEqual([]);
  });

  it('shows full dates in the list and the message', async () => {
    await client.send(inline({ subject: 'Dated' }));
    await row('Dated').waitFor();
    const FULL = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC/;
    expect(await row('Dated').locator('.when').textContent()).toMatch(FULL);
    await open('Dated');
    expect(await page.locator('#d-meta dd').nth(3).textContent()).toMatch(FULL);
  });

  it('deletes one message, then clears the list, after asking', async () => {
    await client.send(inline({ subject: 'Keep' }));
    const gone = await client.send(inline({ subject: 'Delete me' }));
    await open('Delete me');
    await page.click('#delete');
    await page.locator('#detail-empty').waitFor();
    await row('Delete me').waitFor({ state: 'detached' });
    expect((await client.call('GET', `/emails/${gone.json.id}`)).status).toBe(404);
    expect(sandbox.messages().map((m) => m.subject)).toEqual(['Keep']);
    await page.click('#clear-list');
    await page.getByText('No messages yet.').waitFor();
    expect(sandbox.messages()).toEqual([]);
    expect(dialogs).toHaveLength(2);
    // Ids go on counting after a clear.
    expect((await client.send(inline({ subject: 'After' }))).json.id).toBe(3);
  });

  it('loads remote images only when asked, and never runs a message script', async () => {
    const html = [
      `<p id="mark">untouched</p>`,
      `<img id="remote" src="${spy.url}/remote-image.png">`,
      `<script>document.getElementById('mark').textContent = 'script ran'; parent.__pwned = 'images';</script>`,
      `<img src="${spy.url}/broken.png" onerror="document.getElementById('mark').textContent = 'handler ran'">`,
    ].join('');
    const sent = await client.send(inline({ subject: 'With images', html }));
    await open('With images');
    const inner = page.frameLocator('#d-html iframe');
    await inner.locator('#mark').waitFor();
    expect(spy.requests).toEqual([]);
    await page.check('#load-images');
    await page.locator('#frame-hint', { hasText: 'Remote images on' }).waitFor();
    await inner.locator('#mark').waitFor();
    // until the image is asked for, or the test's timeout (a busy machine may take more than a moment)
    while (!spy.requests.some((r) => r.url === '/remote-image.png')) await page.waitForTimeout(20);
    expect(spy.requests.map((r) => r.url)).toContain('/remote-image.png');
    expect(await inner.locator('#mark').textContent()).toBe('untouched');
    expect(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned)).toBeUndefined();
    expect(dialogs).toEqual([]);
    // The sandbox's own open pixel is left out: viewing with images is still not an open.
    expect(sandbox.message(sent.json.id)?.openCount).toBe(0);
  });

  it('previews the html at device widths', async () => {
    await client.send(inline({ subject: 'Narrow', html: '<p>Hi</p>' }));
    await open('Narrow');
    await page.click('button[data-group=width][data-value=phone]');
    await page.locator('#d-html iframe.device-phone').waitFor();
    expect((await page.locator('#d-html iframe').boundingBox())?.width).toBe(375);
    await page.click('button[data-group=width][data-value=tablet]');
    await page.locator('#d-html iframe.device-tablet').waitFor();
    expect((await page.locator('#d-html iframe').boundingBox())?.width).toBe(768);
  });

  it('says in plain words why tracking does not apply: the flag off, or no html body', async () => {
    await client.send(inline({ subject: 'Flag off', trackOpens: false }));
    await client.send(inline({ subject: 'Text only', html: null, text: 'Hi' }));
    await open('Flag off');
    expect(await page.locator('#d-tracking').textContent()).toContain('trackOpens was off for it');
    await open('Text only');
    await page.locator('#d-tracking', { hasText: 'it has no html body' }).waitFor();
  });
});

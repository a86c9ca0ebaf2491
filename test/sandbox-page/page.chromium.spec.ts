/// <reference lib="dom" />
import type { Browser, Page } from 'playwright-core';
import { EmailSandbox } from '../../lib/testing/index.js';
import { inline, RawClient } from '../sandbox/sandbox.client.js';
import { startScriptedServer, type ScriptedServer } from '../support/scripted-server.js';
import { launchChromium } from './page.browser.js';

const TRACKED =
  '<h1 id="h">Your order shipped</h1><p>Follow it <a href="https://shop.example/track/7">here</a>.</p>';

describe('the sandbox page in Chromium', () => {
  let sandbox: EmailSandbox;
  let browser: Browser;
  let page: Page;
  let dialogs: string[];
  const client = new RawClient(() => sandbox);
  // A server elsewhere on loopback that records every request: a message must never reach it.
  let spy: ScriptedServer;
  let spyUrl = '';

  const row = (subject: string) =>
    page.locator('.row', { has: page.locator('.subject', { hasText: subject }) });
  const listed = (subjects: string[]) =>
    page.waitForFunction(
      (want) =>
        JSON.stringify([...document.querySelectorAll('.row .subject')].map((e) => e.textContent)) === want,
      JSON.stringify(subjects),
    );
  const open = async (subject: string) => {
    await row(subject).click();
    await page.locator('#d-subject', { hasText: subject }).waitFor();
  };

  beforeAll(async () => {
    spy = await startScriptedServer((_req, res) => void res.end('x'));
    spyUrl = spy.url;
    [sandbox, browser] = await Promise.all([
      EmailSandbox.start({ tracking: { opens: true, clicks: true } }),
      launchChromium(),
    ]);
  });
  beforeEach(async () => {
    sandbox.reset();
    spy.requests.length = 0;
    dialogs = [];
    page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
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

  it('lists a message sent while it is open, without a reload', async () => {
    await page.getByText('No messages yet.').waitFor();
    const sent = await client.send(
      inline({ subject: 'Arrives live', to: ['grace@example.org', 'alan@example.org'] }),
    );
    expect(sent.status).toBe(201);
    await row('Arrives live').waitFor({ timeout: 3000 });
    expect(await row('Arrives live').locator('.from').textContent()).toBe('Shop <orders@example.com>');
    expect(await row('Arrives live').locator('.to').textContent()).toBe('to grace@example.org +1');
    expect(await row('Arrives live').locator('.status').textContent()).toBe('sent');
    await client.send(inline({ subject: 'Second one' }));
    await row('Second one').waitFor();
    expect(await page.locator('.row .subject').allTextContents()).toEqual(['Second one', 'Arrives live']);
  });

  it('searches by recipient and by subject', async () => {
    await client.send(inline({ subject: 'Invoice 1', to: ['ada@example.org'] }));
    await client.send(inline({ subject: 'Password reset', to: ['bob@example.org'] }));
    await row('Password reset').waitFor();
    await page.fill('#search', 'BOB@');
    await listed(['Password reset']);
    expect(await page.locator('#count').textContent()).toBe('1 message of 2 match, newest first');
    await page.fill('#search', 'invoice');
    await listed(['Invoice 1']);
    await page.fill('#search', '');
    await listed(['Password reset', 'Invoice 1']);
    await page.fill('#search', 'nothing like it');
    await page.getByText('No message matches “nothing like it”.').waitFor();
  });

  it('opens a message: html rendered in a sandboxed frame, text, attachments, template', async () => {
    await client.send(
      inline({
        subject: 'Shipped',
        html: TRACKED,
        text: 'Your order shipped.\nFollow it: https://shop.example/track/7',
        attachments: [{ filename: 'invoice.pdf', content: Buffer.from('%PDF-1.4 fake').toString('base64') }],
      }),
    );
    await client.send({
      from: 'hi@example.com',
      to: ['ada@example.org'],
      templateId: 1,
      variables: { name: 'Ada' },
    });
    await open('Shipped');
    const frame = page.locator('#d-html iframe');
    expect(await frame.getAttribute('sandbox')).toBe('');
    await page.frameLocator('#d-html iframe').locator('#h', { hasText: 'Your order shipped' }).waitFor();
    expect(await page.locator('#d-text pre').textContent()).toBe(
      'Your order shipped.\nFollow it: https://shop.example/track/7',
    );
    const link = page.locator('#d-attachments a');
    expect(await link.textContent()).toBe('invoice.pdf');
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    expect(download.suggestedFilename()).toBe('invoice.pdf');
    // Viewing is not opening: the tracking pixel in the html is blocked by the frame's policy.
    expect(sandbox.message(1)?.openCount).toBe(0);

    await open('Welcome, Ada');
    expect(await page.locator('#d-template').textContent()).toContain('Template 1');
    expect(await page.locator('#d-template td').textContent()).toBe('Ada');
  });

  it('runs nothing from a hostile message and shows its subject and sender literally', async () => {
    const subject = `<img src=x onerror="window.__pwned='subject'"><script>window.__pwned='s'</script> & <b>bold</b>`;
    const from = `"Eve &lt;script&gt; ' onmouseover=alert(1) x='" <eve@example.com>`;
    const html = [
      `<script>parent.__pwned = 'html'; alert('html');</script>`,
      `<img src="x" onerror="alert('img')">`,
      `<img src="${spyUrl}/remote-image.png">`,
      `<link rel="stylesheet" href="${spyUrl}/style.css">`,
      `<meta http-equiv="refresh" content="0;url=${spyUrl}/refresh">`,
      `<form action="${spyUrl}/form"><button id="b">go</button></form>`,
      `<p id="body">Body text</p>`,
      `<p id="mark">untouched</p>`,
      `<script>document.getElementById('mark').textContent = 'script ran';</script>`,
      `<img src="data:," onerror="document.getElementById('mark').textContent = 'handler ran'">`,
    ].join('');
    await client.send(inline({ subject, from, html, text: '<script>alert("text")</script>' }));
    await row(subject).waitFor();
    expect(await row(subject).locator('.subject').textContent()).toBe(subject);
    expect(await row(subject).locator('.from').textContent()).toBe(from);
    await open(subject);
    expect(await page.locator('#d-subject').textContent()).toBe(subject);
    expect(await page.locator('#d-text pre').textContent()).toBe('<script>alert("text")</script>');
    const inner = page.frameLocator('#d-html iframe');
    await inner.locator('#body', { hasText: 'Body text' }).waitFor();
    await inner.locator('#b').click();
    await page.waitForTimeout(300);
    expect(await inner.locator('#mark').textContent()).toBe('untouched');
    expect(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned)).toBeUndefined();
    expect(await page.locator('b, img, script:not([src])').count()).toBe(0);
    expect(dialogs).toEqual([]);
    expect(spy.requests.map((r) => r.url)).toEqual([]);
  });

  it('records opens and clicks with its buttons, and the API returns them', async () => {
    const sent = await client.send(inline({ subject: 'Track me', html: TRACKED }));
    await open('Track me');
    // Following a link inside the preview is not a click: the page only frames the message route.
    await page.frameLocator('#d-html iframe').locator('a').click();
    await page.waitForTimeout(200);
    expect(sandbox.message(sent.json.id)?.clickCount).toBe(0);
    await page.click('#record-open');
    await page.locator('#d-tracking .counters', { hasText: '1 open' }).waitFor();
    await page.click('#record-click');
    await page.locator('#d-tracking .counters', { hasText: '1 click' }).waitFor();
    await page.locator('#d-tracking table tbody tr').nth(1).waitFor();
    const events = await client.call('GET', `/emails/${sent.json.id}/events`);
    expect(events.json.map((e: { type: string; url: string | null }) => [e.type, e.url])).toEqual([
      ['click', 'https://shop.example/track/7'],
      ['open', null],
    ]);
    const record = await client.call('GET', `/emails/${sent.json.id}`);
    expect([record.json.openCount, record.json.clickCount]).toEqual([1, 1]);
  });

  it('says why an event cannot be recorded when tracking does not apply', async () => {
    await client.send(inline({ subject: 'Untracked', trackOpens: false, trackClicks: false }));
    await open('Untracked');
    expect(await page.locator('#record-open').isDisabled()).toBe(true);
    expect(await page.locator('#d-tracking').textContent()).toContain('open tracking does not apply');
  });

  it('moves the clock so that a scheduled message is sent', async () => {
    const at = new Date(sandbox.clock.now() + 3_600_000).toISOString();
    const sent = await client.send(inline({ subject: 'Later', scheduledAt: at }));
    expect(sent.json.status).toBe('scheduled');
    await open('Later');
    await page.click('#send-due');
    await row('Later').locator('.status', { hasText: 'sent' }).waitFor();
    expect((await client.call('GET', `/emails/${sent.json.id}`)).json.status).toBe('sent');
  });

  it('injects and clears faults that change what the API answers', async () => {
    await page.click('#controls > summary');
    await page.selectOption('select[name=route]', 'GET /emails');
    await page.selectOption('select[name=mode]', 'status');
    await page.selectOption('select[name=status]', '503');
    await page.selectOption('select[name=times]', 'all');
    await page.click('#fault-form button[type=submit]');
    await page.locator('#faults li', { hasText: 'status 503 on GET /emails' }).waitFor();
    expect((await client.call('GET', '/emails')).status).toBe(503);
    expect((await client.call('GET', '/emails')).status).toBe(503);
    expect((await client.send(inline())).status).toBe(201);
    await page.click('#clear-faults');
    await page.getByText('No fault injected').waitFor();
    expect((await client.call('GET', '/emails')).status).toBe(200);
  });

  it('shows one pane at a time in a narrow window', async () => {
    await client.send(inline({ subject: 'On a phone' }));
    await page.setViewportSize({ width: 380, height: 800 });
    await open('On a phone');
    expect(await page.locator('#list-pane').isVisible()).toBe(false);
    await page.click('#back');
    await row('On a phone').waitFor();
    expect(await page.locator('#detail-pane').isVisible()).toBe(false);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
    expect(overflow).toBe(false);
  });

  it('resets the sandbox after asking', async () => {
    await client.send(inline({ subject: 'Forget me' }));
    await row('Forget me').waitFor();
    await page.click('#controls > summary');
    await page.click('#reset');
    await page.getByText('No messages yet.').waitFor();
    expect(dialogs).toHaveLength(1);
    expect(sandbox.messages()).toEqual([]);
  });
});

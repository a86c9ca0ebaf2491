/// <reference lib="dom" />
import type { Browser, Page } from 'playwright-core';
import { EmailSandbox } from '../../lib/testing/index.js';
import { inline, RawClient } from '../sandbox/sandbox.client.js';
import { launchChromium } from './page.browser.js';

// What a mail catcher such as Mailpit gives, on the sandbox page, at 1280x800: read/unread, several messages
// selected and deleted, the keyboard, search over sender and text, and a check of the html; and the layout
// and format flaws of issue 38 (list header, clock, html source, width buttons).
describe('the sandbox page as a mail catcher (Chromium, 1280x800)', () => {
  let sandbox: EmailSandbox;
  let browser: Browser;
  let page: Page;
  let dialogs: string[];
  const client = new RawClient(() => sandbox);

  const item = (subject: string) =>
    page.locator('.item', { has: page.locator('.subject', { hasText: subject }) });
  const listed = (subjects: string[]) =>
    page.waitForFunction(
      (want) =>
        JSON.stringify([...document.querySelectorAll('.row .subject')].map((e) => e.textContent)) === want,
      JSON.stringify(subjects),
    );
  const read = async () =>
    Object.fromEntries(
      (
        (await client.call('GET', '/__sandbox/outbox/api/messages', { key: null })).json.items as Array<{
          subject: string;
          read: boolean;
        }>
      ).map((m) => [m.subject, m.read]),
    );

  beforeAll(async () => {
    [sandbox, browser] = await Promise.all([EmailSandbox.start(), launchChromium()]);
  });
  beforeEach(async () => {
    sandbox.reset();
    dialogs = [];
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.accept();
    });
    await page.goto(sandbox.uiUrl as string);
  });
  afterEach(() => page.close());
  afterAll(async () => {
    await Promise.all([browser?.close(), sandbox?.close(), client.close()]);
  });

  it('draws the list header across the whole pane, its button inside, and the clock in the page date format', async () => {
    await client.send(inline({ subject: 'One' }));
    await item('One').waitFor();
    const pane = (await page.locator('#list-pane').boundingBox())!;
    const head = (await page.locator('.list-head').boundingBox())!;
    const border = await page.locator('.list-head').evaluate((e) => getComputedStyle(e).borderBottomWidth);
    expect(border).toBe('1px');
    expect(head.width).toBeGreaterThanOrEqual(pane.width - 2); // the pane's own 1 px borders
    const clear = (await page.locator('#clear-list').boundingBox())!;
    expect(pane.x + pane.width - (clear.x + clear.width)).toBeGreaterThanOrEqual(8);

    await page.click('#controls summary');
    const clock = page.locator('#clock');
    await clock.filter({ hasText: /UTC/ }).waitFor();
    expect(await clock.textContent()).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC/);
    expect(await item('One').locator('.when').textContent()).toMatch(
      /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC/,
    );
  });

  it('lays the html source out one element a line, and shows no width button with it', async () => {
    await client.send(
      inline({
        subject: 'Layout',
        html: '<html><body><table><tr><td><p>Hi <b>you</b></p></td></tr></table></body></html>',
      }),
    );
    await item('Layout').locator('.row').click();
    await page.locator('button[data-value=full][aria-pressed=true]').waitFor();
    await page.click('button[data-group=view][data-value=source]');
    const source = page.locator('#d-source');
    await source.filter({ hasText: '<table>' }).waitFor();
    expect((await source.textContent())!.split('\n')).toEqual([
      '<html>',
      '  <body>',
      '    <table>',
      '      <tr>',
      '        <td>',
      '          <p>',
      '            Hi <b>you</b>',
      '          </p>',
      '        </td>',
      '      </tr>',
      '    </table>',
      '  </body>',
      '</html>',
    ]);
    expect(await page.locator('button[data-group=width]').count()).toBe(0);
    expect(
      await page.locator('button[data-group=view][data-value=source]').getAttribute('aria-pressed'),
    ).toBe('true');
    await page.click('button[data-group=view][data-value=rendered]');
    await page.locator('button[data-value=full][aria-pressed=true]').waitFor();
  });

  it('marks a message read when it is opened, and unread again on request', async () => {
    await client.send(inline({ subject: 'First' }));
    await client.send(inline({ subject: 'Second' }));
    await listed(['Second', 'First']);
    expect(await page.locator('.item.unread').count()).toBe(2);
    await page.locator('#summary', { hasText: '2 messages, 2 unread' }).waitFor();

    await item('First').locator('.row').click();
    await page.locator('.item:not(.unread)', { hasText: 'First' }).waitFor();
    await page.locator('#summary', { hasText: '2 messages, 1 unread' }).waitFor();
    expect(await read()).toEqual({ First: true, Second: false });

    await page.click('#mark-unread');
    await page.locator('.item.unread', { hasText: 'First' }).waitFor();
    expect(await read()).toEqual({ First: false, Second: false });
  });

  it('selects several messages, marks them read and deletes them, leaving the others', async () => {
    for (const subject of ['A', 'B', 'C']) await client.send(inline({ subject }));
    await listed(['C', 'B', 'A']);
    expect(await page.locator('#selection').isHidden()).toBe(true);
    await item('C').locator('.pick').check();
    await item('A').locator('.pick').check();
    await page.locator('#selected-count', { hasText: '2 selected' }).waitFor();
    await page.click('#mark-read');
    await page.locator('.item.unread').first().waitFor();
    await page.waitForFunction(() => document.querySelectorAll('.item.unread').length === 1);
    expect(await read()).toEqual({ A: true, B: false, C: true });

    await page.click('#delete-selected');
    await listed(['B']);
    expect(sandbox.messages().map((m) => m.subject)).toEqual(['B']);
    expect(await page.locator('#selection').isHidden()).toBe(true);

    await client.send(inline({ subject: 'D' }));
    await listed(['D', 'B']);
    await page.check('#pick-all');
    await page.locator('#selected-count', { hasText: '2 selected' }).waitFor();
    await page.click('#delete-selected');
    await page.getByText('No messages yet.').waitFor();
    expect(sandbox.messages()).toEqual([]);
    expect(dialogs).toEqual([]);
  });

  it('is driven by the keyboard: j/k move, Enter opens, x selects, Delete deletes, / searches, Esc goes back', async () => {
    for (const subject of ['Oldest', 'Middle', 'Newest']) await client.send(inline({ subject }));
    await listed(['Newest', 'Middle', 'Oldest']);
    await page.keyboard.press('j');
    await page.locator('.item.cursor', { hasText: 'Newest' }).waitFor();
    await page.keyboard.press('j');
    await page.locator('.item.cursor', { hasText: 'Middle' }).waitFor();
    await page.keyboard.press('Enter');
    await page.locator('#d-subject', { hasText: 'Middle' }).waitFor();
    await page.keyboard.press('Escape');
    await page.locator('#detail-empty').waitFor();

    await page.keyboard.press('k');
    await page.locator('.item.cursor', { hasText: 'Newest' }).waitFor();
    await page.keyboard.press('x');
    await page.keyboard.press('j');
    await page.keyboard.press('j');
    await page.keyboard.press('x');
    await page.locator('#selected-count', { hasText: '2 selected' }).waitFor();
    await page.keyboard.press('Delete');
    await listed(['Middle']);
    expect(sandbox.messages().map((m) => m.subject)).toEqual(['Middle']);

    await page.keyboard.press('/');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('search');
    await page.keyboard.type('nothing');
    await page.getByText('No message matches “nothing”.').waitFor();
    expect(await page.locator('.item.cursor').count()).toBe(0); // typing j/k in the search moves nothing
  });

  it('searches senders and text bodies as well as recipients and subjects', async () => {
    await client.send(
      inline({ subject: 'Invoice', from: 'Billing <billing@example.com>', text: 'Amount due: 42' }),
    );
    await client.send(inline({ subject: 'Welcome', text: 'Your coupon is SPRING-7' }));
    await listed(['Welcome', 'Invoice']);
    await page.fill('#search', 'billing@');
    await listed(['Invoice']);
    await page.fill('#search', 'spring-7');
    await listed(['Welcome']);
    expect(await page.locator('#search').getAttribute('placeholder')).toMatch(
      /sender.*recipient.*subject.*text/,
    );
  });

  it('checks the html: dead links and anchors, images without alt or size, forms and scripts, the size', async () => {
    const html = [
      '<h1 id="top">Hello</h1>',
      '<a href="#top">up</a> <a href="#missing">down</a> <a href="/orders/1">order</a> <a href="">empty</a>',
      '<a href="https://shop.example/ok">fine</a>',
      '<img src="https://cdn.example/logo.png">',
      '<img src="https://cdn.example/ok.png" alt="Logo" width="120" height="40">',
      '<form action="https://shop.example/f"><input name="q"></form><script>x()</script>',
    ].join('\n');
    await client.send(inline({ subject: 'Needs work', html }));
    await client.send(inline({ subject: 'Clean', html: '<p><a href="https://shop.example/a">Shop</a></p>' }));
    await item('Needs work').locator('.row').click();
    await page.click('button[data-group=view][data-value=check]');
    const report = page.locator('#d-check');
    await report.locator('.check-summary').waitFor();
    const summary = (await report.locator('.check-summary').textContent())!;
    expect(summary).toMatch(/^6 problems 2 warnings · 5 links · 2 images · \d+(\.\d)? (B|KiB) of html/);
    const rows = await report
      .locator('tr.finding')
      .evaluateAll((trs) =>
        trs.map(
          (tr) =>
            `${tr.querySelector('.level')!.textContent} ${tr.querySelector('th')!.textContent}: ${tr.querySelector('.finding-text')!.textContent}`,
        ),
      );
    expect(rows).toEqual([
      'problem Anchor: no element has id or name "missing"',
      'problem Link: relative URL "/orders/1" has no site to go to in a mail client: write it in full (https://…)',
      'problem Link: href="" goes nowhere',
      'problem Image: image without alt: readers with images off (or a screen reader) get nothing',
      'warning Image: image without width and height: the layout jumps while it loads, and Outlook may show it at full size',
      'problem Markup: 1 <form>: most mail clients disable forms (Gmail, Outlook): link to a page instead',
      'warning Markup: 1 <input>: form fields do not work in most mail clients',
      'problem Markup: 1 <script>: mail clients never run scripts: the <script> is removed',
    ]);
    expect(await report.locator('code.excerpt').first().textContent()).toBe('<a href="#missing">');
    expect(await page.locator('button[data-group=width]').count()).toBe(0);

    await item('Clean').locator('.row').click();
    await page.locator('#d-subject', { hasText: 'Clean' }).waitFor();
    await report.filter({ hasText: 'Nothing to fix' }).waitFor();
    expect(await report.locator('.check-summary').textContent()).toMatch(
      /^0 problems 0 warnings · 1 link · 0 images/,
    );
  });
});

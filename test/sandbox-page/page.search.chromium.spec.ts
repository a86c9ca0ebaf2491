/// <reference lib="dom" />
import type { Browser, Page } from 'playwright-core';
import type { EmailSandbox, SandboxMailbox } from '../../lib/testing/index.js';
import { inline, RawClient } from '../sandbox/sandbox.client.js';
import { launchChromium } from './page.browser.js';
import { startSearchSandbox, stageSearch, WORDS } from './page.search.fixture.js';

// Issue 53 on the page, in Chromium at 1280x800 (the page's zone UTC) and at a phone's width (390x844, the
// page in Tokyo, UTC+9): Mailpit's search words typed in the box, the words explained beside it, the filters
// by account, template and job, the sender's place in read and unread rows, the Delete key asking as the
// button does, and a text-only message's tracking card.
const SCREENS = [
  { name: '1280x800', viewport: { width: 1280, height: 800 }, timezoneId: 'UTC', tz: 0 },
  { name: 'phone 390x844', viewport: { width: 390, height: 844 }, timezoneId: 'Asia/Tokyo', tz: 540 },
];

/** Waits (without a deadline of its own: the test's timeout ends it) until `done()`. */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((r) => setTimeout(r, 20));
}

/** The subjects a word lists with the page in a zone: only `before:2026-11-23` moves (B is the 23rd in Tokyo). */
const expected = (q: string, want: string[], tz: number) =>
  q === 'before:2026-11-23' && tz === 540 ? ['Your invoice'] : want;

// One Chromium for the file: each screen gets pages of its own (its viewport and zone), never a browser.
let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(() => browser?.close());

describe.each(SCREENS)('the sandbox page, issue 53 (Chromium, $name)', ({ viewport, timezoneId, tz }) => {
  let sandbox: EmailSandbox;
  let page: Page;
  let dialogs: string[];
  let answer: boolean;
  const client = new RawClient(() => sandbox);

  const listed = (subjects: string[]) =>
    page.waitForFunction(
      (want) =>
        JSON.stringify([...document.querySelectorAll('.row .subject')].map((e) => e.textContent)) === want,
      JSON.stringify(subjects),
    );
  const open = async (mailbox?: SandboxMailbox) => {
    page = await browser.newPage({ viewport, timezoneId });
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void (answer ? d.accept() : d.dismiss());
    });
    const query = mailbox ? `?mailbox=${encodeURIComponent(mailbox.name)}` : '';
    await page.goto(`${sandbox.uiUrl as string}${query}`);
  };

  beforeAll(async () => {
    sandbox = await startSearchSandbox();
    await stageSearch(sandbox, client);
  });
  beforeEach(() => {
    dialogs = [];
    answer = true;
  });
  afterEach(() => page?.close());
  afterAll(async () => {
    await Promise.all([sandbox?.close(), client.close()]);
  });

  it('lists, for each search word typed in the box, exactly the messages it names', async () => {
    await open();
    await listed(['Order 42 shipped', 'Welcome, Ada', 'Reset link inside', 'Your invoice', 'Your invoice']);
    for (const [q, want] of WORDS) {
      await page.fill('#search', q);
      await listed(expected(q, want, tz));
      expect(await page.locator('#search-problems').isHidden()).toBe(true);
    }
    await page.fill('#search', 'before:soon to:ada');
    await page.locator('#search-problems', { hasText: 'Left out of the search: before:soon' }).waitFor();
    await listed(['Welcome, Ada', 'Reset link inside', 'Your invoice']);
    await page.fill('#search', '"no such phrase"');
    await page.getByText('No message matches “"no such phrase"”.').waitFor();
  });

  it('explains the search words beside the box, inside the screen, and adds one when it is clicked', async () => {
    await open();
    await listed(['Order 42 shipped', 'Welcome, Ada', 'Reset link inside', 'Your invoice', 'Your invoice']);
    const box = (await page.locator('#search').boundingBox())!;
    const help = page.locator('#search-help > summary');
    const button = (await help.boundingBox())!;
    expect(Math.abs(button.y + button.height / 2 - (box.y + box.height / 2))).toBeLessThanOrEqual(2);
    expect(button.x).toBeGreaterThan(box.x + box.width - 1); // beside it, on its right
    await help.click();
    const panel = page.locator('.search-panel');
    await panel.waitFor();
    const shown = (await panel.boundingBox())!;
    expect(shown.x).toBeGreaterThanOrEqual(0);
    expect(shown.x + shown.width).toBeLessThanOrEqual(viewport.width);
    const words = await panel.locator('code[data-word]').evaluateAll((c) => c.map((e) => e.textContent));
    for (const word of [
      'from:billing',
      'to:ada',
      'subject:"reset link"',
      '"order 42"',
      'is:unread',
      'is:read',
      'has:attachment',
      'after:2026-11-23',
      'before:2026-11-24',
      'status:bounced',
      'account:acme',
      'template:1',
      'job:welcome-42',
      'tag:signup',
      '-from:noreply',
    ])
      expect(words).toContain(word);
    await panel.locator('code', { hasText: 'has:attachment' }).click();
    expect(await page.inputValue('#search')).toBe('has:attachment');
    await listed(['Your invoice']);
    await panel.locator('code', { hasText: 'is:unread' }).click();
    expect(await page.inputValue('#search')).toBe('has:attachment is:unread');
    await listed(['Your invoice']);
    await panel.locator('code', { hasText: 'from:billing' }).click();
    expect(await page.inputValue('#search')).toBe('has:attachment is:unread from:'); // the value is yours to type
    await page.keyboard.type('nobody');
    await page.getByText('No message matches').waitFor();
  });

  it('filters by account, template and job, writing each filter as its search word', async () => {
    await open();
    await listed(['Order 42 shipped', 'Welcome, Ada', 'Reset link inside', 'Your invoice', 'Your invoice']);
    const options = (id: string) =>
      page.locator(`#${id} option`).evaluateAll((o) => o.map((e) => (e as HTMLOptionElement).value));
    expect(await options('filter-account')).toEqual(['', 'acme', 'globex']);
    expect(await options('filter-template')).toEqual(['', '1']);
    expect(await options('filter-job')).toEqual(['', 'ship-42', 'welcome-42']);

    await page.selectOption('#filter-account', 'globex');
    await listed(['Welcome, Ada', 'Your invoice']);
    expect(await page.inputValue('#search')).toBe('account:globex');
    await page.selectOption('#filter-template', '1');
    await listed(['Welcome, Ada']);
    expect(await page.inputValue('#search')).toBe('account:globex template:1');
    await page.selectOption('#filter-account', '');
    await listed(['Welcome, Ada']);
    expect(await page.inputValue('#search')).toBe('template:1');
    await page.selectOption('#filter-template', '');
    await page.selectOption('#filter-job', 'ship-42');
    await listed(['Order 42 shipped']);
    expect(await page.inputValue('#search')).toBe('job:ship-42');
    // a word typed by hand sets its filter too
    await page.fill('#search', 'account:acme -is:read');
    await listed(['Order 42 shipped', 'Reset link inside']);
    await page.waitForFunction(
      () => (document.getElementById('filter-account') as HTMLSelectElement).value === 'acme',
    );
    expect(await page.inputValue('#filter-job')).toBe('');
    // each row says its account and tags
    const first = page.locator('.item').first();
    expect(await first.locator('.tag-account').textContent()).toBe('acme');
    expect(await first.locator('.tag-label').allTextContents()).toEqual(['job:ship-42', 'carrier']);
  });

  it('puts the sender at the same x in read and unread rows, short or long, and keeps a long one inside its row', async () => {
    const layout = sandbox.mailbox({ name: `layout-${tz}` });
    const own = new RawClient(() => layout);
    try {
      const long = `${'A very long display name of a sender '.repeat(3)}<sender@example.com>`;
      for (const [i, from] of ['a@example.com', long, 'a@example.com', long].entries()) {
        const res = await own.send({ from, to: ['ada@example.org'], subject: `Row ${i}`, text: 'x' });
        expect(res.status).toBe(201);
      }
      await client.call('POST', `/__sandbox/outbox/api/messages/read?mailbox=${layout.name}`, {
        key: null,
        body: { ids: [1, 2] },
      });
      await open(layout);
      await listed(['Row 3', 'Row 2', 'Row 1', 'Row 0']);
      const rows = await page.locator('.item').evaluateAll((items) =>
        items.map((li) => {
          const from = li.querySelector('.from')!.getBoundingClientRect();
          const when = li.querySelector('.when')!.getBoundingClientRect();
          const row = li.querySelector('.row')!.getBoundingClientRect();
          return {
            unread: li.classList.contains('unread'),
            fromX: from.x,
            fromRight: from.right,
            whenX: when.x,
            rowX: row.x,
            rowRight: row.right,
          };
        }),
      );
      expect(rows.map((r) => r.unread)).toEqual([true, true, false, false]);
      for (const r of rows) {
        expect(r.fromX).toBe(rows[0].fromX);
        expect(r.fromX - r.rowX).toBeLessThan(20); // at the row's start, never pushed to its middle
        expect(r.fromRight).toBeLessThanOrEqual(r.whenX);
        expect(r.rowRight).toBeLessThanOrEqual(viewport.width);
      }
      // the unread dot is there, in the row's left padding, before the sender
      const dot = await page
        .locator('.item.unread .row')
        .first()
        .evaluate((a) => {
          const s = getComputedStyle(a, '::before');
          return { content: s.content, left: parseFloat(s.left), width: parseFloat(s.width) };
        });
      expect(dot.content).toBe('""');
      expect(dot.left + dot.width).toBeLessThanOrEqual(rows[0].fromX - rows[0].rowX);
    } finally {
      await own.close();
      await layout.close();
    }
  });

  it('asks before the Delete key deletes the message open, as the button does; ticked rows go without a question, as with the selection button', async () => {
    const tools = sandbox.mailbox({ name: `tools-${tz}` });
    const own = new RawClient(() => tools);
    try {
      for (const subject of ['Keep me', 'Delete me', 'Tick one', 'Tick two'])
        await own.send(inline({ subject, to: ['ada@example.org'] }));
      await open(tools);
      await listed(['Tick two', 'Tick one', 'Delete me', 'Keep me']);

      await page.locator('.item', { hasText: 'Delete me' }).locator('.row').click();
      await page.locator('#d-subject', { hasText: 'Delete me' }).waitFor();
      answer = false;
      await page.keyboard.press('Delete');
      await until(() => dialogs.length === 1);
      expect(dialogs).toEqual([`Delete message 2 from the ${tools.name} mailbox?`]);
      expect(tools.sent().map((m) => m.subject)).toContain('Delete me');

      answer = true;
      await page.keyboard.press('Delete');
      await listed(['Tick two', 'Tick one', 'Keep me']);
      expect(dialogs).toHaveLength(2);
      expect(dialogs[1]).toBe(dialogs[0]);

      // the button asks the very same question
      await page.locator('.item', { hasText: 'Keep me' }).locator('.row').click();
      await page.locator('#d-subject', { hasText: 'Keep me' }).waitFor();
      answer = false;
      await page.click('#delete');
      await until(() => dialogs.length === 3);
      expect(dialogs[2]).toBe(`Delete message 1 from the ${tools.name} mailbox?`);
      if (viewport.width < 820) await page.click('#back');
      else await page.keyboard.press('Escape');

      await page.locator('.item', { hasText: 'Tick one' }).locator('.pick').check();
      await page.locator('.item', { hasText: 'Tick two' }).locator('.pick').check();
      await page.locator('#selected-count', { hasText: '2 selected' }).waitFor();
      await page.keyboard.press('Delete');
      await listed(['Keep me']);
      expect(dialogs).toHaveLength(3);
    } finally {
      await own.close();
      await tools.close();
    }
  });

  it('says why nothing can be recorded for a text-only message, without asking to use its disabled buttons', async () => {
    const text = sandbox.mailbox({ name: `text-${tz}`, tracking: { opens: true, clicks: true } });
    const own = new RawClient(() => text);
    try {
      await own.send({ from: 'a@example.com', to: ['ada@example.org'], subject: 'Text only', text: 'Hi' });
      await own.send(inline({ subject: 'With html', html: '<p><a href="https://example.com/a">a</a></p>' }));
      await open(text);
      await page.locator('.item', { hasText: 'Text only' }).locator('.row').click();
      const card = page.locator('#d-tracking');
      await card.locator('#no-events').waitFor();
      expect(await page.locator('#record-open').isDisabled()).toBe(true);
      expect(await page.locator('#record-click').isDisabled()).toBe(true);
      const said = (await card.textContent())!;
      expect(said).not.toMatch(/use the buttons/i);
      expect(await card.locator('#no-events').textContent()).toBe(
        'No opens or clicks: none can be recorded for this message (the reason is above).',
      );
      expect(said).toContain('it has no html body, and tracking needs one');

      if (viewport.width < 820) await page.click('#back');
      await page.locator('.item', { hasText: 'With html' }).locator('.row').click();
      await page.locator('#d-subject', { hasText: 'With html' }).waitFor();
      await card.locator('#no-events', { hasText: 'Use the buttons' }).waitFor();
      expect(await page.locator('#record-open').isDisabled()).toBe(false);
    } finally {
      await own.close();
      await text.close();
    }
  });
});

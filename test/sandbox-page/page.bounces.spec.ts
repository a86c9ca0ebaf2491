/// <reference lib="dom" />
import type { Browser, Page } from 'playwright-core';
import { EmailSandbox } from '../../lib/testing/index.js';
import { launchChromium } from './page.browser.js';

// The page's "Bounces & complaints" panel in Chromium: each mailbox's addresses listed, added from the
// form (as the sample's curl step does through the API) and removed with their button.
describe('the sandbox page lists bounces per mailbox, with add and remove (Chromium)', () => {
  let sandbox: EmailSandbox;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    [sandbox, browser] = await Promise.all([EmailSandbox.start(), launchChromium()]);
  });
  beforeEach(async () => {
    sandbox.reset();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  });
  afterEach(() => page.close());
  afterAll(async () => {
    await Promise.all([browser?.close(), sandbox?.close()]);
  });

  const entries = () => page.locator('#bounces li').allTextContents();

  it('adds an address from the form, shows it in the panel and the badge, and removes it', async () => {
    const tenant = sandbox.mailbox({ name: 'tenant' });
    try {
      tenant.complain('listed@example.org');
      await page.goto(`${sandbox.uiUrl as string}?mailbox=tenant`);
      await page.locator('#controls summary').click();
      await page.waitForFunction(() =>
        document.querySelector('#bounces')?.textContent?.includes('listed@example.org'),
      );
      await page.locator('#bounce-form input[name=address]').fill('gone@example.org');
      await page.locator('#bounce-form select[name=status]').selectOption('bounced');
      await page.locator('#bounce-form button[type=submit]').click();
      await page.waitForFunction(() => document.querySelectorAll('#bounces li').length === 2);
      expect(tenant.bounces()).toEqual([
        { address: 'listed@example.org', status: 'complained' },
        { address: 'gone@example.org', status: 'bounced' },
      ]);
      expect(sandbox.bounces()).toEqual([]); // the default mailbox is another account
      expect(await page.locator('#bounce-badge').textContent()).toBe('2 bounces');
      await page.locator('#bounces li', { hasText: 'gone@example.org' }).locator('button').click();
      await page.waitForFunction(() => document.querySelectorAll('#bounces li').length === 1);
      expect(await entries()).toEqual([expect.stringContaining('listed@example.org · complained')]);
      expect(tenant.bounces()).toEqual([{ address: 'listed@example.org', status: 'complained' }]);
    } finally {
      await tenant.close();
    }
  });
});

// Saves docs/outbox-page-tools.png (1280x800): the outbox page with unread messages, two ticked, and the html
// check of a message that needs work. Run after `npm run build`: node test/sandbox-page/page.screenshot.mjs
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const DIST = new URL('../../dist/testing/index.js', import.meta.url);
const SHOT = fileURLToPath(new URL('../../docs/outbox-page-tools.png', import.meta.url));
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const { EmailSandbox } = await import(DIST.href);

const sandbox = await EmailSandbox.start();
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox'] });
const send = async (body) => {
  const res = await fetch(`${sandbox.baseUrl}/emails`, {
    method: 'POST',
    headers: { authorization: `Bearer ${sandbox.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`send answered ${res.status}: ${await res.text()}`);
  return res.json();
};
try {
  const mail = (subject, extra) => ({
    from: 'Acme Shop <orders@example.com>',
    to: ['ada@example.org'],
    subject,
    ...extra,
  });
  await send(mail('Welcome to Acme', { text: 'Glad you are here.', html: '<p>Glad you are here.</p>' }));
  await send(
    mail('Your receipt #1041', { text: 'Thanks for your order.', html: '<p>Thanks for your order.</p>' }),
  );
  await send(mail('Password reset', { to: ['bob@example.org'], text: 'Use this link within 30 minutes.' }));
  await send(
    mail('Your order #1042 has shipped', {
      text: 'Good news! Track it: https://shop.example/orders/1042/track',
      html: [
        '<div style="max-width:520px"><h2 id="top">Good news, Ada!</h2>',
        '<p>Your order left our warehouse. <a href="/orders/1042/track">Track your parcel</a></p>',
        '<img src="https://cdn.shop.example/logo.png">',
        '<p><a href="#details">See the details</a> · <a href="https://shop.example/help">Help</a></p>',
        '<form action="https://shop.example/rate"><input name="stars"><button>Rate us</button></form>',
        '</div>',
      ].join(''),
    }),
  );
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(sandbox.uiUrl);
  await page.locator('.row').first().waitFor();
  await page.locator('.item').nth(2).locator('.pick').check();
  await page.locator('.item').nth(3).locator('.pick').check();
  await page.locator('.item').first().locator('.row').click();
  await page.click('button[data-group=view][data-value=check]');
  await page.locator('#d-check tr.finding').first().waitFor();
  await page.keyboard.press('j');
  await page.keyboard.press('j');
  await page.waitForTimeout(200);
  await page.screenshot({ path: SHOT });
  console.log(`screenshot: docs/outbox-page-tools.png`);
} finally {
  await browser.close();
  await sandbox.close();
}

// The sandbox's outbox page, measured in a real headless Chromium (Debian's `chromium`, driven by playwright-core):
// - page_first_render_ms: from navigation to the rendered list, with 10,000 messages in the sandbox
//   across 10 mailboxes (the default one and 9 more, 1,000 each), on the default mailbox's page and on
//   another mailbox's (`page_first_render_mailbox_ms`);
// - page_new_message_ms: from a send (request made) to its row on a page already open.
// Medians of a few runs. Afterwards it stages a small realistic outbox and saves docs/outbox-page.png.
// Usage: npm run bench:page   (the last line is one JSON object)
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

/* global document -- used only in functions that run in the page */

const DIST = new URL('../../dist/testing/index.js', import.meta.url);
const SHOT = fileURLToPath(new URL('../../docs/outbox-page.png', import.meta.url));
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const MESSAGES = 10_000;
const MAILBOXES = 10;
const RENDER_RUNS = 5;
const SEND_RUNS = 10;
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

if (!existsSync(fileURLToPath(DIST))) {
  console.error('dist/ is missing: run `npm run build` first');
  process.exit(1);
}
if (!existsSync(CHROMIUM)) {
  console.error(`Chromium not found at ${CHROMIUM}: apt-get install chromium (or set CHROMIUM_PATH)`);
  process.exit(1);
}
const { EmailSandbox } = await import(DIST.href);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round = (x) => Math.round(x * 10) / 10;

function client(sandbox, apiKey = sandbox.apiKey) {
  const call = async (path, body) => {
    const res = await fetch(sandbox.baseUrl + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status !== 201) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
    return res.json();
  };
  return { send: (body) => call('/emails', body), batch: (items) => call('/emails/batch', items) };
}

async function seed(api, count) {
  for (let start = 0; start < count; start += 100) {
    const items = Array.from({ length: Math.min(100, count - start) }, (_, i) => ({
      from: 'Shop <orders@example.com>',
      to: [`customer${(start + i) % 977}@example.org`],
      subject: `Order ${start + i} confirmed`,
      html: `<p>Thanks for order ${start + i}.</p>`,
      text: `Thanks for order ${start + i}.`,
    }));
    await api.batch(items);
  }
}

async function firstRender(page, url) {
  const runs = [];
  for (let i = 0; i < RENDER_RUNS; i++) {
    await page.goto('about:blank');
    const t0 = performance.now();
    await page.goto(url);
    await page.waitForSelector('.row');
    runs.push(performance.now() - t0);
  }
  return runs;
}

async function newMessage(page, api) {
  const runs = [];
  for (let i = 0; i < SEND_RUNS; i++) {
    const subject = `Live message ${i} ${Date.now()}`;
    const seen = page.waitForFunction(
      (s) => [...document.querySelectorAll('.row .subject')].some((e) => e.textContent === s),
      subject,
      { polling: 'raf', timeout: 10_000 },
    );
    const t0 = performance.now();
    await api.send({ from: 'Shop <orders@example.com>', to: ['ada@example.org'], subject, text: 'hi' });
    await seen;
    runs.push(performance.now() - t0);
  }
  return runs;
}

async function search(page, query) {
  const t0 = performance.now();
  await page.fill('#search', query);
  await page.waitForFunction(() => document.querySelector('#count')?.textContent?.includes('match'));
  return performance.now() - t0;
}

/** A small, realistic outbox for the screenshot in docs/outbox-page.md. */
async function stage(sandbox, api) {
  sandbox.reset();
  const at = new Date(sandbox.clock.now() + 2 * 86_400_000).toISOString();
  await api.send({
    from: 'hello@example.com',
    to: ['grace@example.org'],
    templateId: 1,
    variables: { name: 'Grace' },
  });
  await api.send({
    from: 'Acme Shop <orders@example.com>',
    to: ['ada@example.org'],
    subject: 'Your order #1042 has shipped',
    html: [
      '<div style="font-family:Georgia,serif;max-width:520px;margin:24px auto;color:#222">',
      '<h2 style="color:#2f6fde;margin:0 0 12px">Good news, Ada!</h2>',
      '<p>Your order <b>#1042</b> left our warehouse this morning and should arrive on Thursday.</p>',
      '<table style="border-collapse:collapse;width:100%;margin:16px 0">',
      '<tr><td style="padding:6px 0;border-bottom:1px solid #eee">Noise-cancelling headphones</td><td style="text-align:right">€189.00</td></tr>',
      '<tr><td style="padding:6px 0;border-bottom:1px solid #eee">USB-C cable, 2 m</td><td style="text-align:right">€12.00</td></tr>',
      '<tr><td style="padding:6px 0"><b>Total</b></td><td style="text-align:right"><b>€201.00</b></td></tr></table>',
      '<p><a href="https://shop.example/orders/1042/track" style="display:inline-block;background:#2f6fde;color:#fff;padding:9px 16px;border-radius:6px;text-decoration:none">Track your parcel</a></p>',
      '<p style="color:#888;font-size:13px">Acme Shop · 1 Example Street · Questions? Just reply.</p></div>',
    ].join(''),
    text: 'Good news, Ada! Your order #1042 has shipped.\nTrack it: https://shop.example/orders/1042/track',
    trackOpens: true,
    trackClicks: true,
    attachments: [
      {
        filename: 'invoice-1042.pdf',
        content: Buffer.alloc(48_213, 7).toString('base64'),
        contentType: 'application/pdf',
      },
    ],
  });
  await api.send({
    from: 'Acme Shop <news@example.com>',
    to: ['ada@example.org', 'alan@example.org', 'grace@example.org'],
    subject: 'Spring sale starts Monday',
    html: '<p>Up to 30% off.</p>',
    scheduledAt: at,
  });
  const bounced = await api.send({
    from: 'security@example.com',
    to: ['old-address@example.org'],
    subject: 'Reset your password',
    text: 'Use this link within 30 minutes.',
  });
  sandbox.setStatus(bounced.id, 'bounced', 'mailbox unavailable');
  await api.send({
    from: 'security@example.com',
    to: ['alan@example.org'],
    subject: 'New sign-in from Firefox on Linux',
    text: 'Was this you?',
  });
  sandbox.simulateOpen(2);
  sandbox.simulateClick(2);
}

const sandbox = await EmailSandbox.start({ tracking: { opens: true, clicks: true } });
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
try {
  const api = client(sandbox);
  let t0 = performance.now();
  const per = MESSAGES / MAILBOXES;
  await seed(api, per);
  for (let i = 1; i < MAILBOXES; i++) await seed(client(sandbox, sandbox.mailbox().apiKey), per);
  console.log(
    `seeded ${MESSAGES} messages in ${MAILBOXES} mailboxes in ${Math.round(performance.now() - t0)} ms`,
  );
  const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  const render = await firstRender(page, sandbox.uiUrl);
  console.log(
    `first render with ${MESSAGES} messages, default mailbox (ms): ${render.map(round).join(', ')}`,
  );
  const renderOther = await firstRender(page, `${sandbox.uiUrl}?mailbox=mailbox-${MAILBOXES - 1}`);
  console.log(`first render, mailbox-${MAILBOXES - 1} (ms): ${renderOther.map(round).join(', ')}`);
  await page.goto(sandbox.uiUrl);
  await page.waitForSelector('.row');
  const live = await newMessage(page, api);
  console.log(`send to row on an open page (ms): ${live.map(round).join(', ')}`);
  const searchMs = await search(page, 'customer42@');
  console.log(`search by recipient over ${per + SEND_RUNS} messages of a mailbox: ${round(searchMs)} ms`);

  t0 = performance.now();
  await stage(sandbox, api);
  const shot = await browser.newPage({ viewport: { width: 1280, height: 1340 } });
  await shot.goto(`${sandbox.uiUrl}#2`);
  await shot.frameLocator('#d-html iframe').locator('h2').waitFor();
  await shot.locator('#d-tracking table').waitFor();
  await shot.waitForTimeout(300); // let the frame paint
  await shot.screenshot({ path: SHOT });
  console.log(`screenshot: docs/outbox-page.png (${Math.round(performance.now() - t0)} ms)`);

  const result = {
    page_first_render_ms: round(Math.max(median(render), median(renderOther))),
    page_first_render_mailbox_ms: round(median(renderOther)),
    page_new_message_ms: round(median(live)),
    page_search_ms: round(searchMs),
    messages: MESSAGES,
    mailboxes: MAILBOXES,
    targets: { page_first_render_ms: 1000, page_new_message_ms: 500 },
  };
  console.log(JSON.stringify(result));
} finally {
  await browser.close();
  await sandbox.close();
}

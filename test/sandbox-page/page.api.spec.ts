import { request } from 'undici';
import { EmailSandbox } from '../../lib/testing/index.js';
import { SandboxExtras } from '../../lib/testing/sandbox.extras.js';
import type { StoredMessage } from '../../lib/testing/sandbox.store.js';
import { inline, RawClient } from '../sandbox/sandbox.client.js';

describe("the sandbox page's data routes", () => {
  let sandbox: EmailSandbox;
  const client = new RawClient(() => sandbox);
  const pageApi = async (path: string) => {
    const res = await client.call('GET', `/__sandbox/outbox/api/${path}`, { key: null });
    return res;
  };

  beforeAll(async () => {
    sandbox = await EmailSandbox.start();
  });
  beforeEach(() => sandbox.reset());
  afterAll(async () => {
    await Promise.all([sandbox?.close(), client.close()]);
  });

  it('keeps the request of each message for the raw view, never the key', async () => {
    const big = Buffer.alloc(90_000, 1).toString('base64');
    await client.send(inline({ subject: 'small' }), { idempotencyKey: 'raw-route-key-000001' });
    await client.send(inline({ subject: 'big', attachments: [{ filename: 'a.bin', content: big }] }));
    await client.call('POST', '/emails/batch', {
      body: [inline({ subject: 'b0' }), inline({ subject: 'b1' })],
    });
    const small = (await pageApi('messages/1/raw')).json;
    expect(small.request).toMatchObject({
      method: 'POST',
      path: '/emails',
      idempotencyKey: 'raw-route-key-000001',
      batchItem: null,
      truncated: false,
    });
    expect(JSON.parse(small.request.body)).toEqual(inline({ subject: 'small' }));
    expect(JSON.stringify(small)).not.toContain(sandbox.apiKey);
    expect(small.sentHtml).toBe('<p>Thanks!</p>');
    // A body past 64 KiB keeps its JSON whole, the attachment content replaced by a note.
    const bigRaw = JSON.parse((await pageApi('messages/2/raw')).json.request.body);
    expect(bigRaw.attachments[0]).toEqual({
      filename: 'a.bin',
      content: `[${big.length} characters of base64 not shown here: download the attachment]`,
    });
    const item = (await pageApi('messages/4/raw')).json.request;
    expect([item.path, item.batchItem, JSON.parse(item.body).subject]).toEqual(['/emails/batch', 1, 'b1']);
  });

  it('pages every message newest first on the server and searches recipients and subjects', async () => {
    const batch = (from: number) =>
      Array.from({ length: 100 }, (_, i) =>
        inline({ subject: `Order ${from + i}`, to: [`user${(from + i) % 7}@example.org`] }),
      );
    await client.call('POST', '/emails/batch', { body: batch(0) });
    await client.call('POST', '/emails/batch', { body: batch(100) });
    const first = (await pageApi('messages')).json;
    expect([first.total, first.matched, first.items.length, first.more]).toEqual([200, 200, 50, true]);
    expect(first.items[0]).toMatchObject({ id: 200, subject: 'Order 199', status: 'sent', attachments: 0 });
    const next = (await pageApi(`messages?before=${first.items[49].id}&limit=200`)).json;
    expect([next.items.length, next.items[0].id, next.items[149].id, next.more]).toEqual([
      150,
      150,
      1,
      false,
    ]);
    const byTo = (await pageApi('messages?q=USER3@&limit=500')).json;
    expect(byTo.matched).toBe(29);
    expect(byTo.items.every((m: { toAddresses: string[] }) => m.toAddresses[0] === 'user3@example.org')).toBe(
      true,
    );
    // a quoted phrase is one piece of text; unquoted, each word must be somewhere ("Order 119" has both)
    const subjectsOf = async (q: string) =>
      (await pageApi(`messages?q=${encodeURIComponent(q)}`)).json.items.map(
        (m: { subject: string }) => m.subject,
      );
    expect(await subjectsOf('order 19')).toContain('Order 119');
    expect(await subjectsOf('"order 19"')).toEqual([
      'Order 199',
      'Order 198',
      'Order 197',
      'Order 196',
      'Order 195',
      'Order 194',
      'Order 193',
      'Order 192',
      'Order 191',
      'Order 190',
      'Order 19',
    ]);
    expect((await pageApi('messages?limit=0')).json.error).toBe('limit must be an integer from 1 to 500');
  });

  it('shows a message with its template, variables, schedule and attachments, downloadable', async () => {
    const content = Buffer.from('name,total\nAda,42\n');
    const at = new Date(sandbox.clock.now() + 60_000).toISOString();
    const sent = await client.send(
      inline({
        scheduledAt: at,
        attachments: [
          { filename: 'réçu "1".csv', content: content.toString('base64'), contentType: 'text/csv' },
        ],
      }),
    );
    await client.send({
      from: 'hi@example.com',
      to: ['ada@example.org'],
      templateId: 1,
      variables: { name: 'Ada' },
    });
    const view = (await pageApi(`messages/${sent.json.id}`)).json;
    expect(view).toMatchObject({
      status: 'scheduled',
      scheduledAt: at,
      dueAt: at,
      templateId: null,
      hasHtml: true,
    });
    expect(view.attachments).toEqual([
      { index: 0, filename: 'réçu "1".csv', contentType: 'text/csv', size: content.length, kept: true },
    ]);
    expect(view).not.toHaveProperty('html');
    const file = await request(`${sandbox.uiUrl}api/messages/${sent.json.id}/attachments/0`);
    expect(Buffer.from(await file.body.arrayBuffer())).toEqual(content);
    expect(file.headers['content-type']).toBe('application/octet-stream');
    expect(file.headers['content-disposition']).toBe(
      `attachment; filename="r__u _1_.csv"; filename*=UTF-8''r%C3%A9%C3%A7u%20%221%22.csv`,
    );
    const templated = (await pageApi('messages/2')).json;
    expect([templated.templateId, templated.variables, templated.subject]).toEqual([
      1,
      { name: 'Ada' },
      'Welcome, Ada',
    ]);
  });

  it('says when a message is gone', async () => {
    const res = await pageApi('messages/99');
    expect(res.status).toBe(404);
    expect(res.json.error).toBe('email 99 is not in the sandbox (reset, or forgotten past maxMessages)');
    expect((await pageApi('messages/abc')).status).toBe(400);
  });

  it('names what is wrong with a bad action', async () => {
    const act = (path: string, body: unknown) =>
      client
        .call('POST', `/__sandbox/outbox/api/${path}`, { body, key: null })
        .then((r) => [r.status, r.json.error]);
    await client.send(inline({ trackOpens: false }));
    expect(await act('faults', { mode: 'explode' })).toEqual([
      400,
      'mode must be status, delay, hang, drop-before, drop-after or fail-after',
    ]);
    expect(await act('faults', { mode: 'status', status: 404 })).toEqual([
      400,
      'status must be 429, 500, 502 or 503',
    ]);
    expect(await act('clock', { advanceMs: 'soon' })).toEqual([
      400,
      'advanceMs must be an integer number of milliseconds, at most 30 days either way',
    ]);
    expect(await act('messages/1/open', {})).toEqual([
      409,
      'open tracking does not apply to email 1: trackOpens was off for it (the send set it false, or left it out and the account default is off)',
    ]);
  });

  it('marks messages read and deletes several, naming what is wrong with bad ids; a reset starts them unread', async () => {
    const act = (path: string, body: unknown) =>
      client
        .call('POST', `/__sandbox/outbox/api/${path}`, { body, key: null })
        .then((r) => [r.status, r.json]);
    for (const subject of ['A', 'B', 'C']) await client.send(inline({ subject }));
    expect(await act('messages/read', { ids: [1, 3] })).toEqual([200, { unread: 1 }]);
    const reads = async () =>
      (await pageApi('messages')).json.items.map((m: { id: number; read: boolean }) => [m.id, m.read]);
    expect(await reads()).toEqual([
      [3, true],
      [2, false],
      [1, true],
    ]);
    expect(await act('messages/read', { ids: [3], read: false })).toEqual([200, { unread: 2 }]);
    expect(await act('messages/delete', { ids: [2, 3, 99] })).toEqual([
      200,
      { deleted: 2, missing: [99], messages: 1 },
    ]);
    expect(sandbox.messages().map((m) => m.subject)).toEqual(['A']);
    expect(await act('messages/delete', { ids: [] })).toEqual([
      400,
      { error: 'ids must be an array of 1 to 1000 message ids, e.g. {"ids":[3,4]}' },
    ]);
    expect(await act('messages/read', { ids: ['1', -2] })).toEqual([
      400,
      { error: 'ids must be positive integers; not one: ["1",-2]' },
    ]);
    expect(await act('messages/read', { ids: [1], read: 'yes' })).toEqual([
      400,
      { error: 'read must be true or false' },
    ]);
    sandbox.reset();
    await client.send(inline({ subject: 'After reset' }));
    expect(await reads()).toEqual([[1, false]]); // the same id, a new message: unread
    expect((await pageApi('messages')).json.unread).toBe(1);
  });

  it('checks the html the app sent, and says when there is none', async () => {
    await client.send(
      inline({ html: '<p><a href="#x">x</a><img src="https://a.example/i.png" alt=""></p>' }),
    );
    await client.send(inline({ html: undefined, text: 'text only' }));
    const check = (await pageApi('messages/1/check')).json;
    expect(check).toMatchObject({ links: 1, images: 1, errors: 1, warnings: 1 });
    expect(check.findings.map((f: { kind: string }) => f.kind)).toEqual(['anchor', 'image']);
    expect((await pageApi('messages/2/check')).json).toEqual({ error: 'email 2 has no html body to check' });
  });

  it('is served under the base path, and not at all with admin: false', async () => {
    const based = await EmailSandbox.start({ basePath: '/api' });
    const off = await EmailSandbox.start({ admin: false });
    try {
      expect(based.uiUrl).toBe(`${based.baseUrl}/__sandbox/outbox/`);
      const page = await request(based.uiUrl as string);
      expect(page.statusCode).toBe(200);
      expect(await page.body.text()).toContain('<script src="page.js" defer></script>');
      expect(off.uiUrl).toBeNull();
      const none = await request(`${off.baseUrl}/__sandbox/outbox/`);
      expect(none.statusCode).toBe(404);
      await none.body.dump();
    } finally {
      await Promise.all([based.close(), off.close()]);
    }
  });

  it('keeps attachment contents within a byte budget, oldest dropped first', () => {
    const extras = new SandboxExtras(10);
    const a = {} as StoredMessage;
    const b = {} as StoredMessage;
    const file = (n: number) => [{ filename: 'f', content: Buffer.alloc(n).toString('base64') }];
    extras.keep(a, { templateId: null, variables: null }, null, file(6));
    extras.keep(b, { templateId: null, variables: null }, null, file(6));
    expect(extras.of(a).attachments[0]).toMatchObject({ size: 6, content: null });
    expect(extras.of(b).attachments[0].content).toHaveLength(6);
  });
});

import { inline, ISO, LOG_FIELDS, RawClient } from './sandbox.client.js';
import { useSandbox } from '../support/sandbox.js';

describe('EmailSandbox records, list, get and events', () => {
  const sandbox = useSandbox({ keys: ['sk_test_account_a_0001', 'sk_test_account_b_0001'], reset: true });
  const client = new RawClient(() => sandbox);

  afterAll(async () => {
    await client.close();
  });

  it('answers a send with an EmailLog holding every contract field, and nothing else', async () => {
    const res = await client.send(inline());
    expect(res.status).toBe(201);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(Object.keys(res.json)).toEqual(LOG_FIELDS);
    expect(res.json).toMatchObject({
      id: 1,
      fromAddress: 'Shop <orders@example.com>',
      toAddresses: ['ada@example.org'],
      subject: 'Your order',
      status: 'sent',
      errorMessage: null,
      scheduledAt: null,
      trackOpens: false,
      trackClicks: false,
      openedAt: null,
      clickedAt: null,
      openCount: 0,
      clickCount: 0,
    });
    expect(typeof res.json.providerEmailId).toBe('string');
    expect(res.json.createdAt).toMatch(ISO);
    expect(res.json.updatedAt).toMatch(ISO);
  });

  it('gives ids as increasing integers', async () => {
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await client.send(inline())).json.id);
    expect(ids).toEqual([1, 2, 3]);
  });

  it('answers GET /emails/{id} with an EmailDetail (EmailLog + html + bodyText)', async () => {
    const { json: sent } = await client.send(inline({ text: null }));
    const res = await client.call('GET', `/emails/${sent.id}`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.json)).toEqual([...LOG_FIELDS, 'html', 'bodyText']);
    expect(res.json).toEqual({ ...sent, html: '<p>Thanks!</p>', bodyText: null });
  });

  it('lists newest first, 50 by default, up to limit', async () => {
    for (let i = 0; i < 55; i++) await client.send(inline({ subject: `n${i}` }));
    const all = await client.call('GET', '/emails');
    expect(all.status).toBe(200);
    expect(all.json).toHaveLength(50);
    expect(all.json[0].subject).toBe('n54');
    expect(all.json.map((m: { id: number }) => m.id)).toEqual(Array.from({ length: 50 }, (_, i) => 55 - i));
    expect(Object.keys(all.json[0])).toEqual(LOG_FIELDS);
    const three = await client.call('GET', '/emails?limit=3');
    expect(three.json.map((m: { id: number }) => m.id)).toEqual([55, 54, 53]);
    expect((await client.call('GET', '/emails?limit=100')).json).toHaveLength(55);
    expect((await client.call('GET', '/emails?limit=1')).json).toHaveLength(1);
  });

  it.each(['0', '101', '-1', 'abc', '2.5', ''])('answers 400 for limit=%s', async (limit) => {
    const res = await client.call('GET', `/emails?limit=${limit}`);
    expect(res.status).toBe(400);
    expect(typeof res.json.error).toBe('string');
  });

  it('answers 404 for an unknown id on get and events, 400 for a non-integer id', async () => {
    for (const path of ['/emails/999', '/emails/999/events']) {
      const res = await client.call('GET', path);
      expect(res.status).toBe(404);
      expect(typeof res.json.error).toBe('string');
    }
    expect((await client.call('GET', '/emails/abc')).status).toBe(400);
    expect((await client.call('GET', '/emails/abc/events')).status).toBe(400);
  });

  it('answers an empty event list for a message without events', async () => {
    const { json: sent } = await client.send(inline());
    const res = await client.call('GET', `/emails/${sent.id}/events`);
    expect(res.status).toBe(200);
    expect(res.json).toEqual([]);
  });

  it('keeps each key (account) to its own messages', async () => {
    const other = 'sk_test_account_b_0001';
    const { json: mine } = await client.send(inline());
    expect((await client.call('GET', '/emails', { key: other })).json).toEqual([]);
    expect((await client.call('GET', `/emails/${mine.id}`, { key: other })).status).toBe(404);
    expect((await client.call('GET', '/emails')).json).toHaveLength(1);
  });

  it('answers 404 for unknown paths and 405 for other methods', async () => {
    expect((await client.call('GET', '/nothing')).status).toBe(404);
    const res = await client.call('DELETE', '/emails/1');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET');
  });
});

import { request } from 'undici';
import type { SandboxMailbox } from '../../lib/testing/index.js';
import { inline, RawClient } from './sandbox.client.js';
import { useSandbox } from '../support/sandbox.js';

describe('EmailSandbox mailboxes', () => {
  const sandbox = useSandbox({ domains: ['example.com'] });
  const client = new RawClient(() => sandbox);
  const page = async (path: string, init: { method?: string; body?: unknown } = {}) => {
    const res = await request(`${sandbox.uiUrl}${path}`, {
      method: (init.method ?? 'GET') as 'GET',
      headers: init.body === undefined ? {} : { 'content-type': 'application/json' },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      dispatcher: client.agent,
    });
    return { status: res.statusCode, json: (await res.body.json()) as any };
  };

  afterAll(async () => {
    await client.close();
  });

  it('keeps two mailboxes used at once apart: list, get, events and ids', async () => {
    const a = sandbox.mailbox({ name: 'orders' });
    const b = sandbox.mailbox({ name: 'signups' });
    const sends = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        client.send(inline({ subject: `${i % 2 ? 'B' : 'A'} ${i}`, trackOpens: true }), {
          key: i % 2 ? b.apiKey : a.apiKey,
        }),
      ),
    );
    expect(sends.map((s) => s.status)).toEqual(Array(10).fill(201));
    // Each mailbox numbers its own messages from 1: an id says nothing about other mailboxes.
    const idsOf = (box: SandboxMailbox) => box.messages().map((m) => m.id);
    expect(idsOf(a)).toEqual([1, 2, 3, 4, 5]);
    expect(idsOf(b)).toEqual([1, 2, 3, 4, 5]);
    expect(a.messages().every((m) => m.subject.startsWith('A '))).toBe(true);
    expect(b.messages().every((m) => m.subject.startsWith('B '))).toBe(true);

    const listA = await client.call('GET', '/emails', { key: a.apiKey });
    expect(listA.json.map((m: { subject: string }) => m.subject[0])).toEqual(['A', 'A', 'A', 'A', 'A']);
    const getB = await client.call('GET', '/emails/1', { key: b.apiKey });
    expect(getB.json.subject).toBe(b.messages()[0].subject);
    b.simulateOpen(1);
    expect((await client.call('GET', '/emails/1/events', { key: b.apiKey })).json).toHaveLength(1);
    expect((await client.call('GET', '/emails/1/events', { key: a.apiKey })).json).toEqual([]);
    expect(a.message(1)?.openCount).toBe(0);
    // The default mailbox (the sandbox's own key) saw none of it.
    expect((await client.call('GET', '/emails')).json).toEqual([]);
    expect(sandbox.messages()).toEqual([]);
    await a.close();
    await b.close();
  });

  it('answers a message id the mailbox does not hold with 404, even when another mailbox holds it', async () => {
    const a = sandbox.mailbox();
    const b = sandbox.mailbox();
    for (let i = 0; i < 3; i++) expect((await client.send(inline(), { key: a.apiKey })).status).toBe(201);
    expect((await client.call('GET', '/emails/3', { key: b.apiKey })).status).toBe(404);
    expect((await client.call('GET', '/emails/3/events', { key: b.apiKey })).status).toBe(404);
    await Promise.all([a.close(), b.close()]);
  });

  it('gives each mailbox its own idempotency keys, faults, quota, domains and clock', async () => {
    const a = sandbox.mailbox({ quota: { recipients: 1 }, domains: ['a.test'], clock: { frozen: true } });
    const b = sandbox.mailbox({ domains: ['b.test'] });
    const key = 'same-key-in-two-mailboxes';
    const fromA = inline({ from: 'x@a.test' });
    const fromB = inline({ from: 'x@b.test', subject: 'other body' });
    expect((await client.send(fromA, { key: a.apiKey, idempotencyKey: key })).status).toBe(201);
    // The same Idempotency-Key with another body is a 409 only within one mailbox.
    expect((await client.send(fromB, { key: b.apiKey, idempotencyKey: key })).status).toBe(201);
    expect((await client.send(fromA, { key: a.apiKey })).status).toBe(429);
    expect((await client.send(fromB, { key: b.apiKey })).status).toBe(201);
    expect((await client.send(fromB, { key: a.apiKey })).status).toBe(403);
    a.faults.add({ mode: 'status', status: 503, times: 1 });
    expect((await client.call('GET', '/emails', { key: b.apiKey })).status).toBe(200);
    expect((await client.call('GET', '/emails', { key: a.apiKey })).status).toBe(503);
    a.clock.advance(86_400_000);
    expect(b.clock.now()).toBeLessThan(a.clock.now());
    expect(a.requests().every((r) => r.headers.authorization !== `Bearer ${b.apiKey}`)).toBe(true);
    await Promise.all([a.close(), b.close()]);
  });

  it('records tracking events in the mailbox whose link was fetched', async () => {
    const a = sandbox.mailbox({ tracking: { opens: true, clicks: true } });
    const b = sandbox.mailbox({ tracking: { opens: true } });
    await client.send(inline({ html: '<a href="https://shop.example/x">x</a>' }), { key: a.apiKey });
    await client.send(inline(), { key: b.apiKey });
    const html = a.message(1)?.html ?? '';
    const link = /href="([^"]+)"/.exec(html)?.[1] as string;
    expect(link).toContain(`/track/m/${a.name}/`);
    const res = await request(link, { dispatcher: client.agent });
    await res.body.dump();
    expect(res.statusCode).toBe(302);
    expect(a.events(1).map((e) => e.type)).toEqual(['click']);
    expect(b.events(1)).toEqual([]);
    await Promise.all([a.close(), b.close()]);
  });

  it('answers 401 to the key of a closed mailbox and drops it from the list', async () => {
    const a = sandbox.mailbox({ name: 'short-lived' });
    expect(sandbox.mailboxes()).toContain('short-lived');
    expect((await client.send(inline(), { key: a.apiKey })).status).toBe(201);
    await a.close();
    expect((await client.send(inline(), { key: a.apiKey })).status).toBe(401);
    expect(sandbox.mailboxes()).not.toContain('short-lived');
    expect(() => sandbox.mailbox({ name: 'default' })).toThrow(/not "default"/);
    const again = sandbox.mailbox({ name: 'twice' });
    expect(() => sandbox.mailbox({ name: 'twice' })).toThrow(/already has a mailbox named twice/);
    await again.close();
  });

  it('shows one mailbox at a time on the outbox page API', async () => {
    const a = sandbox.mailbox({ name: 'page-a' });
    const b = sandbox.mailbox({ name: 'page-b' });
    await client.send(inline({ subject: 'for a' }), { key: a.apiKey });
    await client.send(inline({ subject: 'for b' }), { key: b.apiKey });
    const boxes = await page('api/mailboxes');
    expect(boxes.json).toEqual(
      expect.arrayContaining([
        { name: 'default', messages: 0 },
        { name: 'page-a', messages: 1 },
        { name: 'page-b', messages: 1 },
      ]),
    );
    expect(boxes.json[0].name).toBe('default');
    const listA = await page('api/messages?mailbox=page-a');
    expect(listA.json.items.map((m: { subject: string }) => m.subject)).toEqual(['for a']);
    expect((await page('api/messages/1?mailbox=page-b')).json.subject).toBe('for b');
    expect((await page('api/messages')).json.total).toBe(0);
    expect((await page('api/messages?mailbox=nope')).status).toBe(404);
    await page('api/faults?mailbox=page-a', { method: 'POST', body: { mode: 'status', status: 503 } });
    expect(a.faults.active().rules).toHaveLength(1);
    expect(b.faults.active().rules).toHaveLength(0);
    await Promise.all([a.close(), b.close()]);
  });
});

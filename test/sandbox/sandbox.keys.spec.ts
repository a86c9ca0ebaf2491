import { request } from 'undici';
import { RemoteSandboxMailbox, type SandboxIdempotencyScope } from '../../lib/testing/index.js';
import { inline, RawClient } from './sandbox.client.js';
import { useSandbox } from '../support/sandbox.js';

const KEY = 'order-1234:confirmation';

describe('EmailSandbox keys added and revoked at run time', () => {
  const sandbox = useSandbox({ domains: ['example.com'] });
  const client = new RawClient(() => sandbox);

  afterAll(async () => {
    await client.close();
  });

  it('addKey gives the mailbox a second key: one message log, and its requests stay the mailbox’s', async () => {
    const box = sandbox.mailbox({ name: 'rotating' });
    const before = sandbox.requests().length;
    const added = box.addKey();
    expect(added).toMatch(/^sk_test_[0-9a-f]{32}$/);
    expect(box.addKey('sk_test_given_by_the_test_0001')).toBe('sk_test_given_by_the_test_0001');
    expect(box.keys).toEqual([box.apiKey, added, 'sk_test_given_by_the_test_0001']);

    const first = await client.send(inline({ subject: 'old key' }), { key: box.apiKey });
    const second = await client.send(inline({ subject: 'new key' }), { key: added });
    expect([first.status, second.status]).toEqual([201, 201]);
    expect([first.json.id, second.json.id]).toEqual([1, 2]);
    const listed = await client.call('GET', '/emails', { key: 'sk_test_given_by_the_test_0001' });
    expect(listed.json.map((m: { subject: string }) => m.subject)).toEqual(['new key', 'old key']);

    expect(box.messages().map((m) => m.subject)).toEqual(['old key', 'new key']);
    expect(box.requests().map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
      'POST /emails 201',
      'POST /emails 201',
      'GET /emails 200',
    ]);
    expect(sandbox.requests()).toHaveLength(before);
    expect(sandbox.messages()).toEqual([]);
    await box.close();
  });

  it('revokeKey answers that key 401 from then on; the other keys and the messages stay', async () => {
    const box = sandbox.mailbox();
    const added = box.addKey();
    expect((await client.send(inline({ subject: 'before' }), { key: box.apiKey })).status).toBe(201);
    box.revokeKey(box.apiKey);
    const refused = await client.send(inline({ subject: 'after' }), { key: box.apiKey });
    expect(refused.status).toBe(401);
    expect(refused.json.error).toMatch(/revoked/);
    expect((await client.call('GET', '/emails/1', { key: box.apiKey })).status).toBe(401);
    const still = await client.call('GET', '/emails/1', { key: added });
    expect(still.status).toBe(200);
    expect(still.json.subject).toBe('before');
    expect(box.messages().map((m) => m.subject)).toEqual(['before']);
    // The refused requests are the mailbox's own, answered 401; the default mailbox saw none of them.
    expect(box.requests().map((r) => r.status)).toEqual([201, 401, 401, 200]);
    expect(sandbox.requests()).toEqual([]);
    // The key the page and the env show is still the first, even once revoked.
    expect(box.apiKey).toBe(box.keys[0]);
    await box.close();
  });

  it('refuses a key another mailbox holds, a key it does not hold, and keys of a closed mailbox', async () => {
    const box = sandbox.mailbox();
    const other = sandbox.mailbox();
    expect(() => box.addKey(other.apiKey)).toThrow(/already belongs to a mailbox/);
    expect(() => box.addKey(sandbox.apiKey)).toThrow(/already belongs to a mailbox/);
    expect(() => box.addKey('has a space')).toThrow(/non-empty token/);
    expect(() => box.revokeKey(other.apiKey)).toThrow(/has no such key/);
    expect((await client.send(inline(), { key: other.apiKey })).status).toBe(201);
    const added = box.addKey();
    await box.close();
    const closed = await client.send(inline(), { key: added });
    expect(closed.status).toBe(401);
    expect(closed.json.error).toBe('invalid API key');
    expect(() => box.addKey()).toThrow(/mailbox is closed/);
    expect(() => box.revokeKey(added)).toThrow(/mailbox is closed/);
    expect(other.messages()).toHaveLength(1);
    await other.close();
  });

  it('shows messages sent with an added key under their mailbox on the outbox page', async () => {
    const box = sandbox.mailbox({ name: 'page-rotated' });
    await client.send(inline({ subject: 'with the added key' }), { key: box.addKey() });
    const res = await request(`${sandbox.uiUrl}api/messages?mailbox=page-rotated`, {
      dispatcher: client.agent,
    });
    const page = (await res.body.json()) as { items: Array<{ subject: string }> };
    expect(page.items.map((m) => m.subject)).toEqual(['with the added key']);
    const all = await request(`${sandbox.uiUrl}api/messages`, { dispatcher: client.agent });
    expect(((await all.body.json()) as { total: number }).total).toBe(0);
    await box.close();
  });

  it("adds keys to the default mailbox too, reaching its first key's account", async () => {
    const added = sandbox.addKey();
    const sent = await client.send(inline({ subject: 'default, added key' }), { key: added });
    expect(sent.status).toBe(201);
    expect((await client.call('GET', '/emails', { key: sandbox.apiKey })).json).toHaveLength(1);
    expect(sandbox.messages().map((m) => m.subject)).toEqual(['default, added key']);
    sandbox.revokeKey(added);
    expect((await client.send(inline(), { key: added })).status).toBe(401);
    expect(sandbox.requests().map((r) => r.status)).toEqual([201, 200, 401]);
  });
});

describe('EmailSandbox idempotencyScope', () => {
  const sandbox = useSandbox({
    keys: [
      { key: 'sk_test_shop_first_0001', account: 'shop' },
      { key: 'sk_test_shop_second_0001', account: 'shop' },
    ],
    idempotencyScope: 'key',
    reset: true,
  });
  const client = new RawClient(() => sandbox);

  afterAll(async () => {
    await client.close();
  });

  /** Sends one body with the same Idempotency-Key under two keys of one mailbox; answers both ids. */
  async function twice(scope: SandboxIdempotencyScope | undefined) {
    const box = sandbox.mailbox(scope === undefined ? {} : { idempotencyScope: scope });
    const second = box.addKey();
    const a = await client.send(inline(), { idempotencyKey: KEY, key: box.apiKey });
    const b = await client.send(inline(), { idempotencyKey: KEY, key: second });
    expect([a.status, b.status]).toEqual([201, 201]);
    const listed = await client.call('GET', '/emails', { key: box.apiKey });
    const result = { ids: [a.json.id, b.json.id], listed: listed.json.length, held: box.messages().length };
    await box.close();
    return result;
  }

  it("'account': the same Idempotency-Key under another key of the mailbox replays the first message", async () => {
    expect(await twice('account')).toEqual({ ids: [1, 1], listed: 1, held: 1 });
  });

  it("'key': the same Idempotency-Key under another key is new, and both messages share the log", async () => {
    expect(await twice('key')).toEqual({ ids: [1, 2], listed: 2, held: 2 });
  });

  it("'key' still replays a repeat under the same key, and 409s another body under it", async () => {
    const box = sandbox.mailbox({ idempotencyScope: 'key' });
    const second = box.addKey();
    await client.send(inline(), { idempotencyKey: KEY, key: box.apiKey });
    const b = await client.send(inline(), { idempotencyKey: KEY, key: second });
    const again = await client.send(inline(), { idempotencyKey: KEY, key: second });
    expect(again.status).toBe(201);
    expect(again.json.id).toBe(b.json.id);
    const other = await client.send(inline({ subject: 'Other' }), { idempotencyKey: KEY, key: second });
    expect(other.status).toBe(409);
    expect(box.messages()).toHaveLength(2);
    await box.close();
  });

  it("a mailbox takes the sandbox's scope unless it names its own", async () => {
    expect(await twice(undefined)).toEqual({ ids: [1, 2], listed: 2, held: 2 });
  });

  it('scopes the keys of one account in the default mailbox by the sandbox option', async () => {
    const a = await client.send(inline(), { idempotencyKey: KEY, key: 'sk_test_shop_first_0001' });
    const b = await client.send(inline(), { idempotencyKey: KEY, key: 'sk_test_shop_second_0001' });
    expect(b.json.id).not.toBe(a.json.id);
    const listed = await client.call('GET', '/emails', { key: 'sk_test_shop_first_0001' });
    expect(listed.json).toHaveLength(2);
  });

  it('refuses a scope it does not know, in code and over the admin API', async () => {
    const scope = 'tenant' as SandboxIdempotencyScope;
    expect(() => sandbox.mailbox({ idempotencyScope: scope })).toThrow(
      /idempotencyScope is 'account' or 'key'/,
    );
    await expect(RemoteSandboxMailbox.create(sandbox.baseUrl, { idempotencyScope: scope })).rejects.toThrow(
      /idempotencyScope must be account or key/,
    );
    const remote = await RemoteSandboxMailbox.create(sandbox.baseUrl, { idempotencyScope: 'account' });
    await remote.close();
  });
});

import { inline, RawClient } from './sandbox.client.js';
import { useSandbox } from '../support/sandbox.js';

const KEY = 'order-1234:confirmation';

describe('EmailSandbox idempotency', () => {
  const sandbox = useSandbox({ keys: ['sk_test_account_a_0001', 'sk_test_account_b_0001'], reset: true });
  const client = new RawClient(() => sandbox);

  afterAll(async () => {
    await client.close();
  });

  it('answers a repeat (same key, same body) with the same record and creates nothing new', async () => {
    const first = await client.send(inline(), { idempotencyKey: KEY });
    const again = await client.send(inline(), { idempotencyKey: KEY });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.json).toEqual(first.json);
    expect(sandbox.messages()).toHaveLength(1);
  });

  it('answers 409 for the same key with a different body, and creates nothing', async () => {
    await client.send(inline(), { idempotencyKey: KEY });
    const other = await client.send(inline({ subject: 'Different' }), { idempotencyKey: KEY });
    expect(other.status).toBe(409);
    expect(sandbox.messages()).toHaveLength(1);
  });

  it('compares the exact body bytes (same JSON with other spacing is a different request)', async () => {
    const body = JSON.stringify(inline());
    await client.send(body, { idempotencyKey: KEY });
    expect((await client.send(JSON.stringify(inline(), null, 2), { idempotencyKey: KEY })).status).toBe(409);
    expect((await client.send(body, { idempotencyKey: KEY })).status).toBe(201);
  });

  it('answers 409 for the same key while the first request is still in flight', async () => {
    sandbox.faults.add({ route: 'POST /emails', mode: 'delay', ms: 400, at: 'after' });
    const first = client.send(inline(), { idempotencyKey: KEY });
    await new Promise((r) => setTimeout(r, 150));
    const second = await client.send(inline(), { idempotencyKey: KEY });
    expect(second.status).toBe(409);
    expect((await first).status).toBe(201);
    const third = await client.send(inline(), { idempotencyKey: KEY });
    expect(third.status).toBe(201);
    expect(third.json.id).toBe((await first).json.id);
    expect(sandbox.messages()).toHaveLength(1);
  });

  it.each(['short-key', 'x'.repeat(129), 'has space in the key!!', 'bad/char/in/key/123'])(
    'answers 400 for the malformed key %s',
    async (key) => {
      const res = await client.send(inline(), { idempotencyKey: key });
      expect(res.status).toBe(400);
      expect(res.json.error).toMatch(/Idempotency-Key/);
      expect(sandbox.messages()).toHaveLength(0);
    },
  );

  it('accepts keys of 16 and 128 characters from the allowed alphabet', async () => {
    expect((await client.send(inline(), { idempotencyKey: 'aZ09_:-aZ09_:-aZ' })).status).toBe(201);
    expect((await client.send(inline(), { idempotencyKey: 'k'.repeat(128) })).status).toBe(201);
  });

  it('does not remember a key whose request failed validation', async () => {
    expect((await client.send(inline({ to: [] }), { idempotencyKey: KEY })).status).toBe(400);
    expect((await client.send(inline(), { idempotencyKey: KEY })).status).toBe(201);
  });

  it('scopes keys per account', async () => {
    const a = await client.send(inline(), { idempotencyKey: KEY });
    const b = await client.send(inline(), { idempotencyKey: KEY, key: 'sk_test_account_b_0001' });
    expect(b.status).toBe(201);
    expect(b.json.id).not.toBe(a.json.id);
  });

  it('forgets a key after the retention time (24 h by default) on the sandbox clock', async () => {
    const first = await client.send(inline(), { idempotencyKey: KEY });
    sandbox.clock.advance(24 * 3_600_000 + 1000);
    const later = await client.send(inline(), { idempotencyKey: KEY });
    expect(later.status).toBe(201);
    expect(later.json.id).not.toBe(first.json.id);
  });

  it('returns the current state of the record on a repeat (a scheduled message that has since been sent)', async () => {
    const body = inline({ scheduledAt: new Date(sandbox.clock.now() + 60_000).toISOString() });
    const first = await client.send(body, { idempotencyKey: KEY });
    expect(first.json.status).toBe('scheduled');
    sandbox.clock.advance(120_000);
    const again = await client.send(body, { idempotencyKey: KEY });
    expect(again.json.id).toBe(first.json.id);
    expect(again.json.status).toBe('sent');
  });

  it('ignores Idempotency-Key on batches (the contract gives batches none)', async () => {
    const r1 = await client.call('POST', '/emails/batch', { body: [inline()], idempotencyKey: KEY });
    const r2 = await client.call('POST', '/emails/batch', { body: [inline()], idempotencyKey: KEY });
    expect([r1.status, r2.status]).toEqual([201, 201]);
    expect(sandbox.messages()).toHaveLength(2);
  });
});

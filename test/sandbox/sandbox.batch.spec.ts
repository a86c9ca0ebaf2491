import { EmailSandbox } from '../../lib/testing/index.js';
import { inline, LOG_FIELDS, RawClient } from './sandbox.client.js';
import { useSandbox } from '../support/sandbox.js';

const items = (n: number) => Array.from({ length: n }, (_, i) => inline({ subject: `item ${i}` }));

describe('EmailSandbox POST /emails/batch', () => {
  const sandbox = useSandbox({ reset: true });
  const client = new RawClient(() => sandbox);
  const batch = (body: unknown) => client.call('POST', '/emails/batch', { body });

  afterAll(async () => {
    await client.close();
  });

  it('accepts 1 and 100 items and answers {data: EmailLog[]} in order', async () => {
    const one = await batch(items(1));
    expect(one.status).toBe(201);
    expect(Object.keys(one.json)).toEqual(['data']);
    expect(Object.keys(one.json.data[0])).toEqual(LOG_FIELDS);
    const hundred = await batch(items(100));
    expect(hundred.status).toBe(201);
    expect(hundred.json.data).toHaveLength(100);
    expect(hundred.json.data.map((m: { subject: string }) => m.subject)).toEqual(
      items(100).map((i) => i.subject),
    );
    expect(sandbox.messages()).toHaveLength(101);
  });

  it.each([
    ['an empty array', []],
    ['101 items', items(101)],
    ['an object instead of an array', { data: items(1) }],
    ['invalid JSON', '[{'],
  ])('answers 400 for %s', async (_name, body) => {
    const res = await batch(body);
    expect(res.status).toBe(400);
    expect(typeof res.json.error).toBe('string');
  });

  it('rejects the whole batch when one item is invalid, naming the item', async () => {
    const body = items(3);
    body[2] = inline({ to: [] });
    const res = await batch(body);
    expect(res.status).toBe(400);
    expect(res.json.error).toMatch(/^\[2\]\.to/);
    expect(sandbox.messages()).toHaveLength(0);
  });

  it.each([
    ['scheduledAt', { scheduledAt: new Date(Date.now() + 60_000).toISOString() }],
    ['attachments', { attachments: [{ filename: 'a.txt', content: 'aGk=' }] }],
  ])('refuses %s in batch items', async (field, extra) => {
    const res = await batch([inline(extra)]);
    expect(res.status).toBe(400);
    expect(res.json.error).toContain(field);
  });
});

describe("EmailSandbox batchInvalidItem: 'skip-item'", () => {
  it('accepts the valid items only, and still answers 400 when none is valid', async () => {
    // own sandbox: options unlike the shared one (useSandbox starts one per describe)
    const sandbox = await EmailSandbox.start({ batchInvalidItem: 'skip-item' });
    const client = new RawClient(() => sandbox);
    try {
      const res = await client.call('POST', '/emails/batch', {
        body: [inline({ subject: 'a' }), inline({ to: [] }), inline({ subject: 'c' })],
      });
      expect(res.status).toBe(201);
      expect(res.json.data.map((m: { subject: string }) => m.subject)).toEqual(['a', 'c']);
      const none = await client.call('POST', '/emails/batch', { body: [inline({ to: [] })] });
      expect(none.status).toBe(400);
    } finally {
      await client.close();
      await sandbox.close();
    }
  });
});

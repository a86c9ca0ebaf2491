import { EmailSandbox } from '../../lib/testing/index.js';
import { inline, RawClient } from './sandbox.client.js';

// The sandbox's bounces and complaints (written from the contract: `bounced` and `complained` are lifecycle
// event kinds, and a record's status is a free string): mail to a marked address is accepted as any other
// (the answer says sent or scheduled), and its record reads bounced or complained once it is sent, as a
// provider's log would after the recipient's server answered. Checked with a plain HTTP client.
describe('the sandbox makes addresses bounce or complain', () => {
  let sandbox: EmailSandbox;
  const client = new RawClient(() => sandbox);
  const record = async (id: number) => (await client.call('GET', `/emails/${id}`)).json;
  const page = (path: string, body?: unknown) =>
    client.call(body === undefined ? 'GET' : 'POST', `/__sandbox/outbox/api/${path}`, { key: null, body });

  beforeAll(async () => {
    sandbox = await EmailSandbox.start({ plan: 'growth' });
  });
  beforeEach(() => sandbox.reset());
  afterAll(async () => {
    await Promise.all([sandbox?.close(), client.close()]);
  });

  it('answers the send as sent, then its record, its list entry and a batch item read bounced', async () => {
    sandbox.bounce('Gone@Example.org');
    const sent = await client.send(inline({ to: ['Ada <gone@example.ORG>'] }));
    expect(sent.status).toBe(201);
    expect(sent.json.status).toBe('sent');
    expect(await record(sent.json.id)).toMatchObject({ status: 'bounced', errorMessage: expect.any(String) });
    const listed = (await client.call('GET', '/emails')).json;
    expect(listed[0]).toMatchObject({ id: sent.json.id, status: 'bounced' });
    const batch = await client.call('POST', '/emails/batch', {
      body: [inline({ to: ['ok@example.org'] }), inline({ to: ['ok@example.org', 'gone@example.org'] })],
    });
    expect(batch.json.data.map((r: { status: string }) => r.status)).toEqual(['sent', 'sent']);
    expect((await record(batch.json.data[0].id)).status).toBe('sent');
    expect((await record(batch.json.data[1].id)).status).toBe('bounced');
  });

  it('complains; a scheduled message reads so once it is sent; existing records only when asked', async () => {
    const before = await client.send(inline({ to: ['spam@example.org'] }));
    sandbox.complain('spam@example.org');
    expect((await record(before.json.id)).status).toBe('sent');
    sandbox.complain('spam@example.org', { existing: true });
    expect(await record(before.json.id)).toMatchObject({ status: 'complained', errorMessage: null });
    const at = new Date(sandbox.clock.now() + 3_600_000).toISOString();
    const scheduled = await client.send(inline({ to: ['spam@example.org'], scheduledAt: at }));
    expect(scheduled.json.status).toBe('scheduled');
    sandbox.clock.advance(3_600_001);
    expect((await record(scheduled.json.id)).status).toBe('complained');
  });

  it('lists, clears and forgets on reset; the page adds and removes them per mailbox', async () => {
    sandbox.bounce('a@example.org');
    expect(sandbox.bounces()).toEqual([{ address: 'a@example.org', status: 'bounced' }]);
    expect(sandbox.clearBounce('A@example.org')).toBe(true);
    expect(sandbox.bounces()).toEqual([]);
    const other = sandbox.mailbox({ name: 'tenant' });
    try {
      const added = await page('bounces?mailbox=tenant', { address: 'b@example.org', status: 'complained' });
      expect(added.status).toBe(201);
      expect(other.bounces()).toEqual([{ address: 'b@example.org', status: 'complained' }]);
      expect(sandbox.bounces()).toEqual([]);
      expect((await page('state?mailbox=tenant')).json.bounces).toEqual([
        { address: 'b@example.org', status: 'complained' },
      ]);
      expect((await page('bounces?mailbox=tenant', { address: 'not an address' })).status).toBe(400);
      expect((await page('bounces/remove?mailbox=tenant', { address: 'b@example.org' })).json).toEqual([]);
      expect((await page('bounces/remove?mailbox=tenant', { address: 'b@example.org' })).status).toBe(404);
      sandbox.bounce('c@example.org');
      sandbox.reset();
      expect(sandbox.bounces()).toEqual([]);
    } finally {
      await other.close();
    }
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmailSandbox, RemoteSandboxMailbox } from '../../lib/testing/index.js';
import { inline, RawClient } from './sandbox.client.js';

/** A record's status as the service lists it, read with `key`. */
async function statuses(client: RawClient, key: string): Promise<Array<[string, string]>> {
  const listed = await client.call('GET', '/emails', { key });
  return (listed.json as Array<{ toAddresses: string[]; status: string }>)
    .map((m): [string, string] => [m.toAddresses[0] as string, m.status])
    .sort((a, b) => a[0].localeCompare(b[0]));
}

// A sandbox in another process (a Jest globalSetup, the CLI) is reached through RemoteSandboxMailbox: its
// bounces and complaints work there as on an in-process mailbox, and `--data` keeps them across restarts.
describe('bounces and complaints of a mailbox in another process, and across restarts', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'email-sandbox-bounces-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a remote mailbox makes an address bounce or complain, lists them and clears one', async () => {
    const sandbox = await EmailSandbox.start({ port: 0 });
    const client = new RawClient(() => sandbox);
    try {
      const box = await RemoteSandboxMailbox.create(sandbox.baseUrl, { domains: ['shop.test'] });
      // a record already held reads `bounced` only with { existing: true }
      await client.send(inline({ from: 'a@shop.test', to: ['old@example.com'] }), { key: box.apiKey });
      await box.bounce('Old <OLD@example.com>', { existing: true });
      await box.complain('spam@example.com');
      expect(await box.bounces()).toEqual([
        { address: 'old@example.com', status: 'bounced' },
        { address: 'spam@example.com', status: 'complained' },
      ]);
      for (const to of ['old@example.com', 'spam@example.com', 'fine@example.com'])
        expect(
          (await client.send(inline({ from: 'a@shop.test', to: [to] }), { key: box.apiKey })).status,
        ).toBe(201);
      expect(await statuses(client, box.apiKey)).toEqual([
        ['fine@example.com', 'sent'],
        ['old@example.com', 'bounced'],
        ['old@example.com', 'bounced'],
        ['spam@example.com', 'complained'],
      ]);
      expect(await box.clearBounce('spam@example.com')).toBe(true);
      expect(await box.clearBounce('spam@example.com')).toBe(false);
      expect(await box.bounces()).toEqual([{ address: 'old@example.com', status: 'bounced' }]);
      // the default mailbox was never touched
      expect(sandbox.bounces()).toEqual([]);
      await expect(box.bounce('not an address')).rejects.toThrow(/answered 400: .*not an email address/);
      await box.close();
      await expect(box.bounces()).rejects.toThrow(/answered 404/);
    } finally {
      await client.close();
      await sandbox.close();
    }
  });

  it('--data keeps the addresses each mailbox makes bounce or complain', async () => {
    const dataDir = join(dir, 'data');
    const first = await EmailSandbox.start({ port: 0, dataDir });
    const box = first.mailbox({ name: 'orders', domains: ['shop.test'] });
    box.bounce('gone@example.com');
    first.complain('angry@example.com');
    await first.close();

    const second = await EmailSandbox.start({ port: 0, dataDir });
    const client = new RawClient(() => second);
    const route = (path: string) => `${second.baseUrl}/__sandbox/mailboxes/orders/${path}`;
    try {
      expect(await (await fetch(route('bounces'))).json()).toEqual([
        { address: 'gone@example.com', status: 'bounced' },
      ]);
      expect(second.bounces()).toEqual([{ address: 'angry@example.com', status: 'complained' }]);
      await client.send(inline({ from: 'a@shop.test', to: ['gone@example.com'] }), { key: box.apiKey });
      expect(await statuses(client, box.apiKey)).toEqual([['gone@example.com', 'bounced']]);
      // a cleared address stays cleared after the next restart
      const cleared = await fetch(route('bounces/remove'), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ address: 'gone@example.com' }),
      });
      expect(await cleared.json()).toEqual({ cleared: true });
    } finally {
      await client.close();
      await second.close();
    }
    const third = await EmailSandbox.start({ port: 0, dataDir });
    try {
      expect(await (await fetch(`${third.baseUrl}/__sandbox/mailboxes/orders/bounces`)).json()).toEqual([]);
      expect(third.bounces()).toEqual([{ address: 'angry@example.com', status: 'complained' }]);
    } finally {
      await third.close();
    }
  });
});

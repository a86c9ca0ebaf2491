import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmailSandbox } from '../../lib/testing/index.js';
import {
  parseSandboxCli,
  SANDBOX_CLI_KEY,
  SANDBOX_CLI_PORT,
  SANDBOX_CLI_USAGE,
} from '../../lib/testing/sandbox.cli-options.js';
import { inline, RawClient } from './sandbox.client.js';

describe('email-sandbox command line', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'email-sandbox-cli-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('has defaults for everything, with the same port and key on every start', () => {
    expect(parseSandboxCli([])).toEqual({
      options: { port: SANDBOX_CLI_PORT, keys: [SANDBOX_CLI_KEY] },
      chaos: null,
      help: false,
    });
    expect(SANDBOX_CLI_PORT).toBe(4010);
    expect(SANDBOX_CLI_USAGE).toContain(`default: ${SANDBOX_CLI_KEY}`);
  });

  it('loads templates from a JSON file and refuses a malformed one', () => {
    const file = join(dir, 'templates.json');
    writeFileSync(file, JSON.stringify({ 7: { subject: 'Reset for {{name}}', text: 'Hi {{name}}' } }));
    expect(parseSandboxCli(['--templates', file]).options.templates).toEqual({
      7: { subject: 'Reset for {{name}}', html: null, text: 'Hi {{name}}' },
    });
    writeFileSync(file, JSON.stringify({ seven: { subject: 'x' } }));
    expect(() => parseSandboxCli(['--templates', file])).toThrow(/template seven needs an integer id/);
    writeFileSync(file, '{ not json');
    expect(() => parseSandboxCli(['--templates', file])).toThrow(/--templates .*templates\.json: /);
  });

  it('--data keeps mailboxes and messages across restarts', async () => {
    const data = join(dir, 'data');
    const options = { ...parseSandboxCli(['--data', data, '--port', '0']).options };
    // own sandboxes: one stopped and a second started on the same persisted state
    const first = await EmailSandbox.start(options);
    const box = first.mailbox({ name: 'orders', domains: ['shop.test'] });
    const client = new RawClient(() => first);
    await client.send(inline({ subject: 'kept in default' }));
    await client.send(
      inline({
        from: 'a@shop.test',
        subject: 'kept in orders',
        attachments: [{ filename: 'a.txt', content: 'aGk=' }],
      }),
      { key: box.apiKey },
    );
    box.setStatus(1, 'bounced', 'gone');
    const added = box.addKey('sk_test_orders_rotated_0002');
    box.revokeKey(box.apiKey);
    await client.close();
    await first.close();

    const second = await EmailSandbox.start(options);
    expect(second.apiKey).toBe(SANDBOX_CLI_KEY);
    expect(second.mailboxes()).toEqual(['default', 'orders']);
    expect(second.messages().map((m) => m.subject)).toEqual(['kept in default']);
    const again = new RawClient(() => second);
    const listed = await again.call('GET', '/emails', { key: added });
    expect(listed.json.map((m: { subject: string; status: string }) => [m.subject, m.status])).toEqual([
      ['kept in orders', 'bounced'],
    ]);
    // Keys added and revoked at run time are kept too (the list above was read with the added one).
    expect((await again.send(inline({ from: 'a@shop.test' }), { key: box.apiKey })).status).toBe(401);
    // Ids go on from where they were.
    const next = await again.send(inline({ from: 'a@shop.test' }), { key: added });
    expect(next.json.id).toBe(2);
    await again.close();
    await second.close();
  });

  it('reads port, keys, domains, plan, base path and chaos', () => {
    const parsed = parseSandboxCli([
      '--port',
      '4010',
      '--key',
      'sk_test_a',
      '--key',
      'sk_test_b',
      '--domain',
      'shop.test',
      '--plan',
      'free',
      '--base-path',
      '/api',
      '--chaos',
      '0.25',
      '--seed',
      '7',
      '--idempotency-scope',
      'key',
    ]);
    expect(parsed.options).toEqual({
      port: 4010,
      keys: ['sk_test_a', 'sk_test_b'],
      domains: ['shop.test'],
      plan: 'free',
      basePath: '/api',
      idempotencyScope: 'key',
    });
    expect(parsed.chaos).toEqual({ probability: 0.25, seed: 7 });
  });

  it.each([
    [['--port']],
    [['--port', 'x']],
    [['--port', '70000']],
    [['--plan', 'pro']],
    [['--chaos', '2']],
    [['--idempotency-scope', 'tenant']],
    [['--bogus']],
  ])('rejects %j', (argv) => {
    expect(() => parseSandboxCli(argv)).toThrow();
  });

  it('offers help', () => {
    expect(parseSandboxCli(['--help']).help).toBe(true);
    expect(SANDBOX_CLI_USAGE).toContain('--port');
  });
});

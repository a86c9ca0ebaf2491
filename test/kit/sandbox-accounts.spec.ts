import { Test, type TestingModule } from '@nestjs/testing';
import {
  EmailSandbox,
  EmailTestingModule,
  SandboxAccounts,
  emailMatchers,
  waitForMessage,
  type EmailMatchers,
} from '../../lib/kit/index.js';
import { inline, RawClient } from '../sandbox/sandbox.client.js';
import { useSandbox } from '../support/sandbox.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace jest {
    // eslint-disable-next-line @typescript-eslint/no-empty-object-type
    interface Matchers<R> extends EmailMatchers<R> {}
  }
}
expect.extend(emailMatchers);

// A plain HTTP client, nothing of EmailService: what the resolver answers is checked on its own here
// (test/kit/kit-accounts.e2e.spec.ts goes through EmailService with `{ account }`).
describe('EmailTestingModule accounts (SandboxAccounts)', () => {
  const sandbox = useSandbox({ domains: ['example.com'] });
  const client = new RawClient(() => sandbox);
  const opened: TestingModule[] = [];

  async function boot(options: Parameters<typeof EmailTestingModule.forRoot>[0]): Promise<TestingModule> {
    const ref = await Test.createTestingModule({
      imports: [EmailTestingModule.forRoot({ sandbox, ...options })],
    }).compile();
    opened.push(ref);
    return ref.init();
  }

  /** Sends as an account: with the key and base URL its resolver answers. */
  async function sendAs(accounts: SandboxAccounts, id: string, subject: string) {
    const account = accounts.resolve(id);
    if (!account) throw new Error(`no account ${id}`);
    return client.send(inline({ subject }), { key: account.apiKey });
  }

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((ref) => ref.close()));
  });

  afterAll(async () => {
    await client.close();
  });

  it("gives each account its own mailbox, named after it, and resolves the account's key", async () => {
    const ref = await boot({ accounts: ['tenant-a', 'tenant-b'] });
    const accounts = ref.get(SandboxAccounts);
    expect(accounts).toBeInstanceOf(SandboxAccounts);
    expect(accounts.ids()).toEqual(['tenant-a', 'tenant-b']);
    expect(sandbox.mailboxes()).toEqual(expect.arrayContaining(['tenant-a', 'tenant-b']));
    const a = accounts.mailbox('tenant-a');
    const b = accounts.mailbox('tenant-b');
    expect(a.name).toBe('tenant-a');
    expect(a.apiKey).not.toBe(b.apiKey);
    expect(accounts.resolve('tenant-a')).toEqual({ apiKey: a.apiKey, baseUrl: a.baseUrl });
    expect(accounts.resolve('tenant-b')).toEqual({ apiKey: b.apiKey, baseUrl: b.baseUrl });
    expect(accounts.resolve('tenant-c')).toBeNull();
    expect(() => accounts.mailbox('tenant-c')).toThrow(
      'the test kit has no account "tenant-c" (its accounts: "tenant-a", "tenant-b")',
    );
  });

  it("keeps each account's messages and requests apart, for the matchers and helpers too", async () => {
    const ref = await boot({ accounts: ['tenant-a', 'tenant-b'] });
    const accounts = ref.get(SandboxAccounts);
    expect((await sendAs(accounts, 'tenant-a', 'for a')).status).toBe(201);
    expect((await sendAs(accounts, 'tenant-b', 'for b')).status).toBe(201);
    expect((await sendAs(accounts, 'tenant-b', 'for b again')).status).toBe(201);
    expect(accounts.mailbox('tenant-a')).toHaveSentTimes(1);
    expect(accounts.mailbox('tenant-a')).toHaveSent({ subject: 'for a' });
    expect(accounts.mailbox('tenant-a')).not.toHaveSent({ subject: 'for b' });
    expect(accounts.mailbox('tenant-b')).toHaveSentTimes(2);
    expect(accounts.mailbox('tenant-b')).not.toHaveSent({ subject: 'for a' });
    const found = await waitForMessage(accounts.mailbox('tenant-b'), { subject: 'for b again' });
    expect(found.id).toBe(2);
    await expect(
      waitForMessage(accounts.mailbox('tenant-a'), { subject: 'for b' }, { timeoutMs: 200 }),
    ).rejects.toThrow();
    expect(accounts.mailbox('tenant-a').requests()).toHaveLength(1);
    expect(accounts.mailbox('tenant-b').requests()).toHaveLength(2);
    expect(sandbox.messages()).toEqual([]);
  });

  it('rotateKey adds a key that resolve answers from then on; the old one works until revoked', async () => {
    const ref = await boot({ accounts: ['tenant-a', 'tenant-b'] });
    const accounts = ref.get(SandboxAccounts);
    const box = accounts.mailbox('tenant-a');
    const old = box.apiKey;
    const next = accounts.rotateKey('tenant-a');
    expect(next).not.toBe(old);
    expect(box.keys).toEqual([old, next]);
    expect(accounts.resolve('tenant-a')).toEqual({ apiKey: next, baseUrl: box.baseUrl });
    expect(accounts.resolve('tenant-b')?.apiKey).toBe(accounts.mailbox('tenant-b').apiKey);
    expect((await sendAs(accounts, 'tenant-a', 'with the new key')).status).toBe(201);
    expect((await client.send(inline({ subject: 'with the old key' }), { key: old })).status).toBe(201);
    box.revokeKey(old);
    expect((await client.send(inline(), { key: old })).status).toBe(401);
    expect(box).toHaveSentTimes(2);
    expect(accounts.mailbox('tenant-b')).toHaveSentTimes(0);
    expect(() => accounts.rotateKey('tenant-c')).toThrow(/no account "tenant-c"/);
  });

  it('takes mailbox options per account, and names a mailbox otherwise when the id cannot be its name', async () => {
    const taken = sandbox.mailbox({ name: 'tenant-a' }); // the name is taken on this sandbox already
    const ref = await boot({ accounts: { 'tenant-a': { domains: ['a.test'] }, 'Tenant B / EU': {} } });
    const accounts = ref.get(SandboxAccounts);
    expect(accounts.ids()).toEqual(['tenant-a', 'Tenant B / EU']);
    expect(accounts.mailbox('tenant-a').name).toMatch(/^mailbox-\d+$/);
    expect(accounts.mailbox('tenant-a').domains).toEqual(['a.test']);
    expect(accounts.mailbox('Tenant B / EU').name).toMatch(/^mailbox-\d+$/);
    expect(accounts.mailbox('Tenant B / EU').domains).toEqual(['example.com']);
    await taken.close();
  });

  it('closes every mailbox with the app (their keys are then answered 401)', async () => {
    const ref = await boot({ accounts: ['tenant-a', 'tenant-b'] });
    const accounts = ref.get(SandboxAccounts);
    const keys = accounts.ids().map((id) => accounts.resolve(id)?.apiKey as string);
    const rotated = accounts.rotateKey('tenant-b');
    await ref.close();
    opened.splice(0);
    expect(sandbox.mailboxes()).toEqual(['default']);
    for (const key of [...keys, rotated]) expect((await client.send(inline(), { key })).status).toBe(401);
  });

  it('refuses an account id given twice or empty, and leaves no mailbox behind', async () => {
    await expect(boot({ accounts: ['tenant-a', 'tenant-a'] })).rejects.toThrow(
      'EmailTestingModule: the account "tenant-a" is given twice',
    );
    await expect(boot({ accounts: [''] })).rejects.toThrow(/every account id is a non-empty string/);
    expect(sandbox.mailboxes()).toEqual(['default']);
  });

  it('gives an empty SandboxAccounts without the option', async () => {
    const ref = await boot({});
    expect(ref.get(SandboxAccounts).ids()).toEqual([]);
    expect(ref.get(SandboxAccounts).resolve('tenant-a')).toBeNull();
    expect(ref.get(EmailSandbox)).toBeDefined();
  });
});

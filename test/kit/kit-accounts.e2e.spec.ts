import { Test, type TestingModule } from '@nestjs/testing';
import { EmailService, type EmailInput } from '../../lib/index.js';
import { EmailAccountError } from '../../lib/errors/email-account.error.js';
import {
  EmailTestingModule,
  SandboxAccounts,
  SandboxMailbox,
  emailMatchers,
  type EmailMatchers,
  type EmailTestingModuleOptions,
} from '../../lib/kit/index.js';
import { useSandbox } from '../support/sandbox.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace jest {
    // eslint-disable-next-line @typescript-eslint/no-empty-object-type
    interface Matchers<R> extends EmailMatchers<R> {}
  }
}
expect.extend(emailMatchers);

const input = (subject: string): EmailInput => ({
  from: 'orders@example.com',
  to: ['ada@example.org'],
  subject,
  text: 'Hi',
});

// EmailService with `{ account }` over the sandbox: the test kit's accounts end to end.
describe('EmailTestingModule accounts through EmailService', () => {
  const sandbox = useSandbox({ domains: ['example.com'] });
  let ref: TestingModule | undefined;

  async function boot(options: EmailTestingModuleOptions = {}) {
    ref = await Test.createTestingModule({
      imports: [
        EmailTestingModule.forRoot({
          sandbox,
          accounts: ['tenant-a', 'tenant-b'],
          ...options,
          email: { maxRetries: 0, ...options.email },
        }),
      ],
    }).compile();
    await ref.init();
    return { email: ref.get(EmailService), accounts: ref.get(SandboxAccounts) };
  }

  afterEach(async () => {
    await ref?.close();
    ref = undefined;
  });

  it("sends each account's email with its own key: it shows only in that account's mailbox", async () => {
    const { email, accounts } = await boot();
    await email.send(input('for a'), { account: 'tenant-a' });
    await email.send(input('for b'), { account: 'tenant-b' });
    await email.send(input('for b again'), { account: 'tenant-b' });
    const a = accounts.mailbox('tenant-a');
    const b = accounts.mailbox('tenant-b');
    expect(a).toHaveSentTimes(1, { subject: 'for a' });
    expect(a).toHaveSentTimes(1);
    expect(b).toHaveSentTimes(2);
    expect(b).not.toHaveSent({ subject: 'for a' });
    expect(await email.list({ account: 'tenant-b' })).toHaveLength(2);
    expect(a.requests().every((r) => r.status === 201 || r.status === 200)).toBe(true);
    expect(ref?.get(SandboxMailbox)).toHaveSentTimes(0);
    expect(sandbox.messages()).toEqual([]);
  });

  it('refuses an unknown account before anything is sent, naming it', async () => {
    const { email, accounts } = await boot();
    const failure = email.send(input('for nobody'), { account: 'tenant-c' });
    await expect(failure).rejects.toBeInstanceOf(EmailAccountError);
    await expect(failure).rejects.toMatchObject({
      accountId: 'tenant-c',
      problem: 'unknown',
      outcome: 'not-sent',
    });
    for (const id of accounts.ids()) expect(accounts.mailbox(id).requests()).toEqual([]);
    expect(ref?.get(SandboxMailbox).requests()).toEqual([]);
    expect(sandbox.requests()).toEqual([]);
  });

  it('refuses a call without { account } unless defaultAccount makes SandboxMailbox the default account', async () => {
    const first = await boot();
    await expect(first.email.send(input('no account'))).rejects.toMatchObject({ problem: 'no-account' });
    await ref?.close();
    const second = await boot({ defaultAccount: true });
    await second.email.send(input('default account'));
    expect(ref?.get(SandboxMailbox)).toHaveSent({ subject: 'default account' });
    expect(second.accounts.mailbox('tenant-a')).toHaveSentTimes(0);
  });

  it('uses a rotated key once the account is forgotten (the old key revoked)', async () => {
    const { email, accounts } = await boot();
    const box = accounts.mailbox('tenant-a');
    await email.send(input('with the first key'), { account: 'tenant-a' });
    const old = box.apiKey;
    const next = accounts.rotateKey('tenant-a');
    box.revokeKey(old);
    // The module still holds the old key (cached for accountCacheTtlMs): answered 401.
    await expect(email.send(input('stale key'), { account: 'tenant-a' })).rejects.toMatchObject({
      status: 401,
    });
    email.forgetAccount('tenant-a');
    await email.send(input('with the rotated key'), { account: 'tenant-a' });
    expect(box).toHaveSent({ subject: 'with the rotated key' });
    expect(box).not.toHaveSent({ subject: 'stale key' });
    expect(accounts.resolve('tenant-a')?.apiKey).toBe(next);
    expect(accounts.mailbox('tenant-b')).toHaveSentTimes(0);
  });
});

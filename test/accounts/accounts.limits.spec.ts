/**
 * Issue 35: limits per account, counted in recipients and shared through one real Redis by every app
 * instance ("process"), plus the module's budget over every account; a 429 for one account pauses that
 * account alone, in every instance. The sandbox enforces each mailbox's quota, so a budget that does not
 * hold draws 429s there.
 */
import {
  EmailRateLimitError,
  type EmailAccount,
  type EmailModuleOptions,
  type EmailService,
} from '../../lib/index.js';
import { EmailSandbox, type SandboxMailbox } from '../../lib/testing/index.js';
import { emailApp } from '../support/email-app.js';
import { startRedis, type TestRedis } from '../support/redis-server.mjs';

let redis: TestRedis;
let sandbox: EmailSandbox;
let a: SandboxMailbox;
let b: SandboxMailbox;
const opened: Array<() => Promise<void>> = [];

beforeAll(async () => {
  redis = await startRedis();
  sandbox = await EmailSandbox.start({ ref: false });
}, 60_000);
afterAll(async () => {
  await sandbox.close();
  await redis.stop();
});
beforeEach(() => {
  // windows of 3 s: a busy machine may hold a request counted in one window past a 1 s window's end
  a = sandbox.mailbox({ name: 'tenant-a', quota: { recipients: 4, windowMs: 3000 } });
  b = sandbox.mailbox({ name: 'tenant-b', quota: { recipients: 4, windowMs: 3000 } });
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((close) => close()));
  await Promise.all([a.close(), b.close()]);
});

let prefixSeq = 0;
async function instances(n: number, options: Partial<EmailModuleOptions> = {}): Promise<EmailService[]> {
  const budget = { recipients: { limit: 4, intervalMs: 3000 } };
  const table: Record<string, EmailAccount> = {
    a: { apiKey: a.apiKey, rateLimit: budget },
    b: { apiKey: b.apiKey, rateLimit: budget },
  };
  const prefix = `accounts-limits-${++prefixSeq}`;
  const out: EmailService[] = [];
  for (let i = 0; i < n; i++) {
    const { email, close } = await emailApp({
      apiKey: undefined,
      baseUrl: sandbox.baseUrl,
      accounts: (id) => table[id] ?? null,
      maxRetries: 0,
      timeoutMs: 30_000,
      ...options,
      rateLimit: {
        requests: { limit: 1000, intervalMs: 1000 },
        redis: redis.url,
        prefix,
        ...options.rateLimit,
      },
    });
    opened.push(close);
    out.push(email);
  }
  return out;
}

const mail = (i: number, to = 1) => ({
  from: 'shop@example.com',
  to: Array.from({ length: to }, (_, k) => `r${k}@example.org`),
  subject: 'Your order',
  text: `body ${i}`,
});

it('keeps each account within its own budget across three instances: every send goes, no 429', async () => {
  const [x, y, z] = await instances(3);
  const sends = [];
  for (let i = 0; i < 9; i++) {
    const email = [x, y, z][i % 3]!;
    sends.push(email.send(mail(i), { account: 'a' }));
    sends.push(email.send(mail(100 + i), { account: 'b' }));
  }
  const results = await Promise.allSettled(sends);
  expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
  const refused = (box: SandboxMailbox) => box.requests().filter((r) => r.status === 429).length;
  expect(refused(a)).toBe(0);
  expect(refused(b)).toBe(0);
  expect(a.messages()).toHaveLength(9);
  expect(b.messages()).toHaveLength(9);
}, 60_000);

it("the module's own budget is one budget over every account", async () => {
  const [x, y] = await instances(2, { rateLimit: { recipients: { limit: 3, intervalMs: 60_000 } } });
  await x!.send(mail(1, 2), { account: 'a' });
  await y!.send(mail(2), { account: 'b' });
  // a's and b's own budgets have room; the module's (3 per minute, over both) has none
  const err = await x!.send(mail(3), { account: 'b', timeoutMs: 1_500 }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(EmailRateLimitError);
  expect(err).toMatchObject({ budget: 'recipients', budgetOf: 'module', outcome: 'not-sent' });
  expect(b.messages()).toHaveLength(1);
});

it('a 429 for account A pauses A in every instance, and B not at all', async () => {
  const [x, y] = await instances(2);
  a.faults.add({ route: 'POST /emails', mode: 'status', status: 429, retryAfter: 30, times: 1 });
  await expect(x!.send(mail(1), { account: 'a', timeoutMs: 1_000 })).rejects.toBeInstanceOf(
    EmailRateLimitError,
  );
  // the other instance knows: A's next send is refused without a request, B's goes at once
  const before = a.requests().length;
  const paused = await y!.send(mail(2), { account: 'a', timeoutMs: 1_000 }).catch((e: unknown) => e);
  expect(paused).toMatchObject({
    name: 'EmailRateLimitError',
    budget: 'paused',
    budgetOf: 'account',
    outcome: 'not-sent',
  });
  expect(a.requests().length).toBe(before);
  await y!.send(mail(3), { account: 'b', timeoutMs: 5_000 });
  expect(b.messages()).toHaveLength(1);
});

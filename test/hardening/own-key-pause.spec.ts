/**
 * Issue 50, item 10: with `accounts`, the module's own key is one account among the others. A 429 for
 * it pauses it alone, in every instance that shares the Redis; the accounts go on. Two app instances
 * ("processes") share one real Redis; the sandbox answers the own key's send with a 429. On the code
 * before the fix, that 429 blocked the module's budgets, which every account's request takes a share of:
 * every account of both instances waited the whole Retry-After (refused here, within a short deadline).
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
let own: SandboxMailbox;
let acme: SandboxMailbox;
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
  own = sandbox.mailbox({ name: 'own' });
  acme = sandbox.mailbox({ name: 'acme' });
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((close) => close()));
  await Promise.all([own.close(), acme.close()]);
});

let prefixSeq = 0;
/** `n` instances with the module's own key and one account, sharing Redis (and a module budget). */
async function instances(n: number, rateLimit: EmailModuleOptions['rateLimit']): Promise<EmailService[]> {
  const table: Record<string, EmailAccount> = { acme: { apiKey: acme.apiKey } };
  const prefix = `own-key-pause-${++prefixSeq}`;
  const out: EmailService[] = [];
  for (let i = 0; i < n; i++) {
    const { email, close } = await emailApp({
      apiKey: own.apiKey,
      baseUrl: sandbox.baseUrl,
      accounts: (id) => table[id] ?? null,
      maxRetries: 0,
      rateLimit: { redis: redis.url, prefix, ...rateLimit },
    });
    opened.push(close);
    out.push(email);
  }
  return out;
}

const mail = (text: string) => ({
  from: 'shop@example.com',
  to: ['ada@example.org'],
  subject: 'Order',
  text,
});

describe.each([
  ['a module budget over every account', { requests: { limit: 100, intervalMs: 1000 } }],
  ['no module budget (rateLimit: { redis } alone)', {}],
])("the module's own key's 429 pauses that key alone (%s)", (_name, budget) => {
  it('in every instance; accounts go on in both', async () => {
    const [x, y] = await instances(2, budget);
    own.faults.add({ route: 'POST /emails', mode: 'status', status: 429, retryAfter: 30, times: 1 });
    await expect(x!.send(mail('drew a 429'), { timeoutMs: 1_000 })).rejects.toBeInstanceOf(
      EmailRateLimitError,
    );

    // The account goes at once from both instances.
    await x!.send(mail('acme from x'), { account: 'acme', timeoutMs: 1_000 });
    await y!.send(mail('acme from y'), { account: 'acme', timeoutMs: 1_000 });
    expect(
      acme
        .messages()
        .map((m) => m.bodyText)
        .sort(),
    ).toEqual(['acme from x', 'acme from y']);

    // The own key is paused in the other instance too: refused without a request.
    const requests = own.requests().length;
    const paused = await y!.send(mail('own from y'), { timeoutMs: 1_000 }).catch((e: unknown) => e);
    expect(paused).toMatchObject({
      name: 'EmailRateLimitError',
      budget: 'paused',
      budgetOf: 'module',
      outcome: 'not-sent',
    });
    expect(own.requests().length).toBe(requests);
    expect(own.messages()).toEqual([]);
  });
});

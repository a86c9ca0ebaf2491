/**
 * Issue 35: many accounts in one app, through `EmailService` with `{ account }` against the sandbox (one
 * mailbox per account, each reached only by its own key), over real HTTP on loopback.
 */
import { inspect } from 'node:util';
import { Inject, Injectable, Module } from '@nestjs/common';
import { emailErrorToHttpException } from '../../lib/interceptors/email-error.helpers.js';
import {
  EmailAccountError,
  EmailService,
  type EmailAccount,
  type EmailModuleOptions,
} from '../../lib/index.js';
import { EmailSandbox, type SandboxMailbox } from '../../lib/testing/index.js';
import { emailApp } from '../support/email-app.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The app's own store of accounts: the resolver reads it at run time, as it would read a table. */
class AccountTable {
  readonly rows = new Map<string, EmailAccount>();
  calls = 0;
  failing: Error | undefined;
  slowMs = 0;
  resolve = async (id: string): Promise<EmailAccount | null> => {
    this.calls++;
    if (this.slowMs > 0) await sleep(this.slowMs);
    if (this.failing) throw this.failing;
    return this.rows.get(id) ?? null;
  };
}

let sandbox: EmailSandbox;
let acme: SandboxMailbox;
let globex: SandboxMailbox;
let acmeNext: SandboxMailbox;
const opened: Array<() => Promise<void>> = [];

beforeAll(async () => {
  sandbox = await EmailSandbox.start({ ref: false });
});
afterAll(() => sandbox.close());
beforeEach(() => {
  acme = sandbox.mailbox({ name: 'acme' });
  globex = sandbox.mailbox({ name: 'globex' });
  acmeNext = sandbox.mailbox({ name: 'acme-rotated' });
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((close) => close()));
  await Promise.all([acme.close(), globex.close(), acmeNext.close()]);
});

async function app(table: AccountTable, options: Partial<EmailModuleOptions> = {}): Promise<EmailService> {
  const { email, close } = await emailApp({
    apiKey: undefined,
    baseUrl: sandbox.baseUrl,
    accounts: table.resolve,
    maxRetries: 0,
    ...options,
  });
  opened.push(close);
  return email;
}

function tableOf(): AccountTable {
  const table = new AccountTable();
  table.rows.set('acme', { apiKey: acme.apiKey, defaultFrom: 'Acme <orders@example.com>' });
  table.rows.set('globex', { apiKey: globex.apiKey, baseUrl: globex.baseUrl });
  return table;
}

const mail = (text: string) => ({
  to: ['ada@example.org'],
  subject: 'Your order',
  text,
});

describe('EmailService with { account }', () => {
  it("sends each account's email with its own key: it shows in that account's mailbox only", async () => {
    const email = await app(tableOf());
    const a = await email.send(mail('for acme'), { account: 'acme' });
    const g = await email.send({ ...mail('for globex'), from: 'shop@example.com' }, { account: 'globex' });
    expect(acme.messages().map((m) => m.bodyText)).toEqual(['for acme']);
    expect(globex.messages().map((m) => m.bodyText)).toEqual(['for globex']);
    // the account's own defaultFrom, the reads with its key
    expect(acme.messages()[0]?.fromAddress).toBe('Acme <orders@example.com>');
    expect((await email.get(a.id, { account: 'acme' })).bodyText).toBe('for acme');
    expect((await email.list({ account: 'globex' })).map((r) => r.id)).toEqual([g.id]);
  });

  it('refuses an unknown account before any request: EmailAccountError, not-sent, naming the account', async () => {
    const email = await app(tableOf());
    const err = await email.send(mail('x'), { account: 'initech' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EmailAccountError);
    expect(err).toMatchObject({ accountId: 'initech', problem: 'unknown', outcome: 'not-sent' });
    expect((err as Error).message).toContain('"initech"');
    expect(sandbox.requests()).toHaveLength(0);
    for (const box of [acme, globex]) expect(box.requests()).toHaveLength(0);
  });

  it('without { account } and without an apiKey of its own, refuses the call (no-account)', async () => {
    const email = await app(tableOf());
    await expect(email.send(mail('x'))).rejects.toMatchObject({
      name: 'EmailAccountError',
      problem: 'no-account',
    });
    await expect(email.list()).rejects.toBeInstanceOf(EmailAccountError);
  });

  it('refuses a bad account id, naming the rule', async () => {
    const email = await app(tableOf());
    for (const bad of ['', 'a\u0000b', 'x'.repeat(300), 42 as unknown as string]) {
      const err = await email.send(mail('x'), { account: bad }).catch((e: unknown) => e);
      expect(err).toMatchObject({ name: 'EmailAccountError', problem: 'invalid-id', outcome: 'not-sent' });
    }
  });

  it('a resolver that throws or is slower than the call is refused with its cause; the key never shows', async () => {
    const table = tableOf();
    const email = await app(table);
    table.failing = new Error(`db down: postgres://u:${acme.apiKey}@db`);
    const thrown = await email.send(mail('x'), { account: 'acme' }).catch((e: unknown) => e);
    expect(thrown).toMatchObject({
      name: 'EmailAccountError',
      problem: 'resolver-failed',
      outcome: 'not-sent',
    });
    expect((thrown as Error).cause).toBeInstanceOf(Error);
    table.failing = undefined;
    table.slowMs = 1_500;
    const slow = await email.send(mail('x'), { account: 'globex', timeoutMs: 200 }).catch((e: unknown) => e);
    expect(slow).toMatchObject({ name: 'EmailAccountError', problem: 'resolver-failed' });
    expect(String((slow as Error).cause)).toContain('longer than 200 ms');
    expect(sandbox.requests()).toHaveLength(0);
  });

  it("checks the resolver's answer like the module's options, naming the problem, never the key", async () => {
    const table = tableOf();
    table.rows.set('bearer', { apiKey: `Bearer ${acme.apiKey}` });
    table.rows.set('http', { apiKey: acme.apiKey, baseUrl: 'http://mail.example.com' });
    table.rows.set('extra', { apiKey: acme.apiKey, region: 'eu' } as EmailAccount);
    table.rows.set('budget', {
      apiKey: acme.apiKey,
      rateLimit: { recipients: { limit: 0, intervalMs: 10 } },
    });
    const email = await app(table);
    for (const [id, says] of [
      ['bearer', "without the 'Bearer ' prefix"],
      ['http', 'plain http'],
      ['extra', 'unknown field "region"'],
      ['budget', 'rateLimit.recipients.limit'],
    ]) {
      const err = await email.send(mail('x'), { account: id }).catch((e: unknown) => e);
      expect(err).toMatchObject({ name: 'EmailAccountError', problem: 'invalid-account', accountId: id });
      expect((err as Error).message).toContain(says);
      expect((err as Error).message).not.toContain(acme.apiKey);
    }
    expect(sandbox.requests()).toHaveLength(0);
  });

  it("uses a rotated key after forgetAccount, and after the cache's expiry", async () => {
    const table = tableOf();
    const email = await app(table, { accountCacheTtlMs: 300 });
    await email.send(mail('one'), { account: 'acme' });
    table.rows.set('acme', { apiKey: acmeNext.apiKey, defaultFrom: 'orders@example.com' });
    await email.send(mail('two'), { account: 'acme' }); // cached: the old key still
    email.forgetAccount('acme');
    await email.send(mail('three'), { account: 'acme' });
    expect(acme.messages().map((m) => m.bodyText)).toEqual(['one', 'two']);
    expect(acmeNext.messages().map((m) => m.bodyText)).toEqual(['three']);

    table.rows.set('acme', { apiKey: acme.apiKey, defaultFrom: 'orders@example.com' });
    await email.send(mail('four'), { account: 'acme' }); // still cached
    await sleep(450);
    await email.send(mail('five'), { account: 'acme' });
    expect(acmeNext.messages().map((m) => m.bodyText)).toEqual(['three', 'four']);
    expect(acme.messages().map((m) => m.bodyText)).toEqual(['one', 'two', 'five']);
  });

  it('asks the resolver once for calls that come together, and not again while cached', async () => {
    const table = tableOf();
    table.slowMs = 100;
    const email = await app(table);
    await Promise.all([1, 2, 3, 4, 5].map((i) => email.send(mail(`n${i}`), { account: 'acme' })));
    await email.send(mail('n6'), { account: 'acme' });
    expect(table.calls).toBe(1);
    expect(acme.messages()).toHaveLength(6);
  });

  it('keeps records apart: look-alike mail of two accounts at once, with faults, never crosses', async () => {
    const email = await app(tableOf(), { maxRetries: 2 });
    acme.faults.add({ route: 'POST /emails', mode: 'fail-after', status: 500, times: 3 });
    globex.faults.add({ route: 'POST /emails', mode: 'drop-after', times: 3 });
    const sends = [];
    for (let i = 0; i < 8; i++) {
      // the same sender, recipients and subject in both accounts; bodies that differ, and some identical
      const text = i % 3 === 0 ? 'identical body' : `body ${i}`;
      const from = 'shop@example.com';
      sends.push(
        email.send({ ...mail(text), from }, { account: 'acme' }).then((r) => ['acme', r, text] as const),
      );
      sends.push(
        email.send({ ...mail(text), from }, { account: 'globex' }).then((r) => ['globex', r, text] as const),
      );
    }
    const answers = await Promise.allSettled(sends);
    for (const a of answers) {
      if (a.status === 'rejected') {
        expect((a.reason as { outcome?: string }).outcome).toBeDefined(); // an honest uncertain end at worst
        continue;
      }
      const [account, record, text] = a.value;
      const box = account === 'acme' ? acme : globex;
      expect(box.message(record.id)?.bodyText).toBe(text); // the record is this account's own message
    }
    // never two messages for one call: at most 8 per account
    expect(acme.messages().length).toBeLessThanOrEqual(8);
    expect(globex.messages().length).toBeLessThanOrEqual(8);
  });

  it('shows no key of any account in inspect output, JSON or errors', async () => {
    const table = tableOf();
    const email = await app(table);
    await email.send(mail('x'), { account: 'acme' });
    globex.faults.add({ route: 'POST /emails', mode: 'status', status: 500, times: 5 });
    const err = await email
      .send({ ...mail('y'), from: 'a@example.com' }, { account: 'globex' })
      .catch((e: unknown) => e);
    const shown = [
      inspect(email, { depth: 10, showHidden: true }),
      inspect(email, { depth: 10, customInspect: false, showHidden: true, getters: true }),
      JSON.stringify(email),
      inspect(err, { depth: 10, showHidden: true }),
      JSON.stringify(err),
      String(err),
    ].join('\n');
    for (const key of [acme.apiKey, globex.apiKey]) {
      expect(shown).not.toContain(key);
      expect(shown).not.toContain(Buffer.from(key).toString('base64'));
    }
  });
});

describe('logs and HTTP answers', () => {
  it("logs no account's key, whatever the outcome", async () => {
    const lines: string[] = [];
    const capture = (...args: unknown[]) =>
      void lines.push(args.map((a) => inspect(a, { depth: 5 })).join(' '));
    const logger = { log: capture, warn: capture, error: capture, debug: capture, verbose: capture };
    const email = await app(tableOf(), { logger, maxRetries: 1 });
    acme.faults.add({ route: 'POST /emails', mode: 'fail-after', status: 500, times: 2 });
    globex.faults.add({ route: 'POST /emails', mode: 'status', status: 429, retryAfter: 1, times: 1 });
    await Promise.allSettled([
      email.send(mail('a'), { account: 'acme' }),
      email.send({ ...mail('g'), from: 'x@example.com' }, { account: 'globex' }),
      email.send(mail('u'), { account: 'nobody' }),
      email.list({ account: 'globex' }),
    ]);
    expect(lines.length).toBeGreaterThan(0);
    const text = lines.join('\n');
    for (const key of [acme.apiKey, globex.apiKey]) expect(text).not.toContain(key);
  });

  it("the interceptor answers 404 for an unknown account (or an id none can have), 503 for a resolver that failed, 500 for the app's own mistakes", () => {
    const status = (problem: EmailAccountError['problem'], accountId: string | undefined = 'acme') =>
      emailErrorToHttpException(new EmailAccountError({ accountId, problem }));
    const unknown = status('unknown', 'ada@example.org');
    expect(unknown?.getStatus()).toBe(404);
    expect(status('invalid-id', 'a\u0000b')?.getStatus()).toBe(404);
    expect(status('resolver-failed')?.getStatus()).toBe(503);
    expect(status('invalid-account')?.getStatus()).toBe(500);
    expect(status('no-account', undefined)?.getStatus()).toBe(500);
    expect(JSON.stringify(unknown?.getResponse())).not.toContain('ada@example.org');
    expect(unknown?.getResponse()).toMatchObject({
      statusCode: 404,
      error: 'Not Found',
      message: 'The email account was not found',
      outcome: 'not-sent',
    });
  });
});

describe('EmailModule options with accounts', () => {
  it('refuses a module with neither apiKey nor accounts, and a bad accounts option', async () => {
    await expect(app(tableOf(), { accounts: undefined })).rejects.toThrow(/apiKey is required/);
    await expect(app(tableOf(), { accounts: 'x' as never })).rejects.toThrow(
      /accounts must be an EmailAccountResolver/,
    );
    await expect(app(tableOf(), { accountCacheTtlMs: -1 })).rejects.toThrow(/accountCacheTtlMs/);
  });

  it('a resolver class among the providers, whose database is made asynchronously, serves every call', async () => {
    // Nest builds the app's providers while EmailModule's are built: the class's instance is unfinished
    // then (its database not yet made). The module must not keep that instance.
    const DB = Symbol('tenants database');
    @Injectable()
    class TenantAccounts {
      constructor(@Inject(DB) private readonly db: Map<string, EmailAccount>) {}
      resolve(id: string): EmailAccount | null {
        return this.db.get(id) ?? null;
      }
    }
    @Module({
      providers: [
        {
          provide: DB,
          useFactory: async () => {
            await sleep(50); // the connection
            return new Map([['acme', { apiKey: acme.apiKey, defaultFrom: 'orders@example.com' }]]);
          },
        },
        TenantAccounts,
      ],
      exports: [TenantAccounts],
    })
    class TenantsModule {}
    const { email, close } = await emailApp({
      apiKey: undefined,
      baseUrl: sandbox.baseUrl,
      accounts: TenantAccounts,
      maxRetries: 0,
      imports: [TenantsModule],
    });
    opened.push(close);
    await email.send({ to: ['ada@example.com'], subject: 'Hi', text: 'from acme' }, { account: 'acme' });
    expect(acme.messages().map((m) => [m.fromAddress, m.bodyText])).toEqual([
      ['orders@example.com', 'from acme'],
    ]);
    await expect(email.send(mail('x'), { account: 'globex' })).rejects.toMatchObject({ problem: 'unknown' });
  });

  it("with an apiKey too, a call without { account } uses the module's own key", async () => {
    const email = await app(tableOf(), { apiKey: globex.apiKey });
    await email.send({ ...mail('own'), from: 'a@example.com' });
    await email.send(mail('acme'), { account: 'acme' });
    expect(globex.messages().map((m) => m.bodyText)).toEqual(['own']);
    expect(acme.messages().map((m) => m.bodyText)).toEqual(['acme']);
  });
});

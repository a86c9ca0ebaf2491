/**
 * Issue 50, items 8 and 9: a resolution that began before `forgetAccount` is never cached (and its
 * callers ask again), and calls that join one slow resolution each keep their own deadline and signal.
 * Against the sandbox (one mailbox per key) over real HTTP. On the code before the fix, sends after
 * `forgetAccount` used the revoked key that a resolution begun before it had cached (401), and every
 * call joined the first caller's budget: a short call waited for the resolver and sent, a long one
 * failed at the first caller's deadline, an abort waited for the resolver.
 */
import { EmailAbortError, EmailAccountError, EmailService, type EmailAccount } from '../../lib/index.js';
import { EmailSandbox, type SandboxMailbox } from '../../lib/testing/index.js';
import { emailApp } from '../support/email-app.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The app's table of accounts, read by the resolver; `gate` holds the resolver's answer until opened. */
class Table {
  readonly rows = new Map<string, EmailAccount>();
  calls = 0;
  private opened: (() => void) | undefined;
  private gate: Promise<void> | undefined;
  hold(): void {
    this.gate = new Promise((r) => (this.opened = r));
  }
  release(): void {
    this.opened?.();
    this.gate = undefined;
  }
  /** Later calls answer at once; calls already held stay held. */
  unhold(): void {
    this.gate = undefined;
  }
  resolve = async (id: string): Promise<EmailAccount | null> => {
    this.calls++;
    const row = this.rows.get(id) ?? null; // read when called: a resolution answers what it read then
    const gate = this.gate;
    if (gate !== undefined) await gate;
    return row;
  };
}

let sandbox: EmailSandbox;
let before: SandboxMailbox;
let after: SandboxMailbox;
const closing: Array<() => Promise<void>> = [];
beforeAll(async () => {
  sandbox = await EmailSandbox.start({ ref: false });
});
afterAll(() => sandbox.close());
beforeEach(() => {
  before = sandbox.mailbox({ name: 'acme-before' });
  after = sandbox.mailbox({ name: 'acme-after' });
});
afterEach(async () => {
  await Promise.all(closing.splice(0).map((c) => c()));
  await Promise.all([before.close(), after.close()]);
});

async function app(table: Table): Promise<EmailService> {
  const built = await emailApp({
    apiKey: undefined,
    baseUrl: sandbox.baseUrl,
    accounts: table.resolve,
    maxRetries: 0,
  });
  closing.push(built.close);
  return built.email;
}

const mail = (text: string) => ({
  from: 'shop@example.com',
  to: ['ada@example.org'],
  subject: 'Order',
  text,
});

/** Which of the two mailboxes got each text. */
const landed = () => ({
  before: before.messages().map((m) => m.bodyText),
  after: after.messages().map((m) => m.bodyText),
});

describe('forgetAccount during a resolution (issue 50, item 8)', () => {
  it('a resolution begun before forgetAccount is not cached: calls after it use the new key', async () => {
    const table = new Table();
    table.rows.set('acme', { apiKey: before.apiKey });
    const email = await app(table);
    table.hold();
    const early = email.send(mail('early'), { account: 'acme' }); // its resolution reads the old key
    await sleep(20);
    // The key is rotated in the app's table, the old one revoked at the service, the account forgotten.
    table.rows.set('acme', { apiKey: after.apiKey });
    await before.close();
    email.forgetAccount('acme');
    table.release();
    await early;
    await email.send(mail('100 ms after'), { account: 'acme' });
    await sleep(50);
    await email.send(mail('later'), { account: 'acme' });
    expect(landed()).toEqual({ before: [], after: ['early', '100 ms after', 'later'] });
  });

  it('calls that joined the forgotten resolution ask again, and so do queued calls after it', async () => {
    const table = new Table();
    table.rows.set('acme', { apiKey: before.apiKey });
    const email = await app(table);
    table.hold();
    const joined = [1, 2, 3].map((n) => email.send(mail(`joined ${n}`), { account: 'acme' }));
    await sleep(20);
    table.rows.set('acme', { apiKey: after.apiKey });
    email.forgetAccount('acme');
    table.release();
    await Promise.all(joined);
    expect(landed()).toEqual({ before: [], after: ['joined 1', 'joined 2', 'joined 3'] });
    // Two resolver calls: the forgotten one, and one for every call that was waiting on it.
    expect(table.calls).toBe(2);
  });
});

describe('each caller keeps its own deadline and signal on a shared resolution (issue 50, item 9)', () => {
  it('a short call fails at its own deadline; a longer one joined after it still sends', async () => {
    const table = new Table();
    table.rows.set('acme', { apiKey: after.apiKey });
    const email = await app(table);
    table.hold();
    const order: string[] = [];
    const short = email.send(mail('short'), { account: 'acme', timeoutMs: 150 }).then(
      () => order.push('short sent'),
      (e: unknown) => (order.push('short failed'), e),
    );
    await sleep(10);
    const long = email.send(mail('long'), { account: 'acme', timeoutMs: 10_000 }).then(
      () => order.push('long sent'),
      (e: unknown) => (order.push('long failed'), e),
    );
    const failure = await short;
    expect(failure).toBeInstanceOf(EmailAccountError);
    expect(failure).toMatchObject({ problem: 'resolver-failed', outcome: 'not-sent' });
    expect(String((failure as Error).cause)).toContain('longer than 150 ms');
    table.release(); // the resolver answers only after the short call gave up
    await long;
    expect(order).toEqual(['short failed', 'long sent']);
    expect(landed().after).toEqual(['long']);
    expect(table.calls).toBe(1);
  });

  it('an abort ends that call at once, with EmailAbortError; the others wait on', async () => {
    const table = new Table();
    table.rows.set('acme', { apiKey: after.apiKey });
    const email = await app(table);
    table.hold();
    const order: string[] = [];
    const controller = new AbortController();
    const first = email.send(mail('first'), { account: 'acme' }).then(() => order.push('first sent'));
    await sleep(10);
    const aborted = email
      .send(mail('aborted'), { account: 'acme', signal: controller.signal })
      .catch((e: unknown) => (order.push('aborted'), e));
    await sleep(10);
    controller.abort();
    const err = await aborted;
    expect(err).toBeInstanceOf(EmailAbortError);
    expect(err).toMatchObject({ method: 'POST', path: '/emails', outcome: 'not-sent' });
    table.release();
    await first;
    expect(order).toEqual(['aborted', 'first sent']);
    expect(landed().after).toEqual(['first']);
  });

  it('when every caller gave up, the next call asks the resolver again, not held by the stuck one', async () => {
    const table = new Table();
    table.rows.set('acme', { apiKey: after.apiKey });
    const email = await app(table);
    table.hold(); // this resolver call never answers
    const gaveUp = await email
      .send(mail('gave up'), { account: 'acme', timeoutMs: 100 })
      .catch((e: unknown) => e);
    expect(gaveUp).toMatchObject({ problem: 'resolver-failed' });
    table.unhold(); // later resolver calls answer at once; the first one stays stuck
    await email.send(mail('next'), { account: 'acme', timeoutMs: 2_000 });
    expect(landed().after).toEqual(['next']);
    expect(table.calls).toBe(2);
  });
});

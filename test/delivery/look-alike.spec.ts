import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { EmailLog, EmailService } from '../../lib/index.js';
import { EmailSandbox } from '../../lib/testing/index.js';
import { emailApp } from '../support/email-app.js';
import { emailLogJson } from '../support/records.fixture.js';
import { json, startScriptedServer, type ScriptedServer } from '../support/scripted-server.js';
import { useSandbox } from '../support/sandbox.js';

/**
 * "A call's record is always its own message" (issue 22): emails that share sender, recipients and
 * subject (login codes, order updates) must never be handed one another's record when a send is
 * uncertain. Each case checks, per call, that the record returned is the record of the message that
 * carries that call's own body, and that the server holds each intended email exactly once.
 */
const from = 'shop@example.com';
const to = ['ada@example.com'];
const subject = 'Your login code';
const login = (code: string) => ({ from, to, subject, text: `Your code is ${code}` });

describe('look-alike email against the sandbox', () => {
  const sandbox = useSandbox({ reset: true });
  let first: { email: EmailService; close: () => Promise<void> };
  let second: { email: EmailService; close: () => Promise<void> };

  beforeAll(async () => {
    const options = { baseUrl: sandbox.baseUrl, apiKey: sandbox.apiKey, timeoutMs: 10_000 };
    // Two module instances share nothing: as far as the library knows, two processes.
    first = await emailApp(options);
    second = await emailApp(options);
  });
  afterAll(async () => {
    await first.close();
    await second.close();
  });

  /** The body of the message the sandbox holds under the record's id. */
  const bodyOf = (record: EmailLog) => sandbox.messages().find((m) => m.id === record.id)?.bodyText;
  const texts = () =>
    sandbox
      .messages()
      .map((m) => m.bodyText ?? m.html)
      .sort();

  it('another process sent the same sender, recipients and subject 100 ms before: not adopted (nothing created)', async () => {
    await second.email.send(login('111111'));
    await new Promise((resolve) => setTimeout(resolve, 100));
    sandbox.faults.add({ route: 'POST /emails', mode: 'drop-before', times: 1 });
    const mine = await first.email.send(login('222222'));
    expect(bodyOf(mine)).toBe('Your code is 222222');
    expect(texts()).toEqual(['Your code is 111111', 'Your code is 222222']);
  });

  it.each(['drop-after', 'fail-after'] as const)(
    'another process sent a look-alike, and this call was created with its answer lost (%s): its own is found',
    async (mode) => {
      await second.email.send(login('333333'));
      sandbox.faults.add({ route: 'POST /emails', mode, times: 1 });
      const mine = await first.email.send(login('444444'));
      expect(bodyOf(mine)).toBe('Your code is 444444');
      expect(texts()).toEqual(['Your code is 333333', 'Your code is 444444']);
    },
  );

  it('a 503 that created nothing while a look-alike of another process exists: resent with its key, its own', async () => {
    await second.email.send(login('555555'));
    sandbox.faults.add({ route: 'POST /emails', mode: 'status', status: 503, times: 1 });
    const mine = await first.email.send(login('666666'));
    expect(bodyOf(mine)).toBe('Your code is 666666');
    expect(texts()).toHaveLength(2);
  });

  it('a template send never adopts an unrelated "Invoice #42" to the same person', async () => {
    await second.email.send({ from, to, subject: 'Invoice #42', text: 'Amount due: 42' });
    sandbox.faults.add({ route: 'POST /emails', mode: 'drop-before', times: 1 });
    const mine = await first.email.send({ from, to, templateId: 1, variables: { name: 'Ada' } });
    expect(bodyOf(mine)).toContain('Hello Ada');
    expect(sandbox.messages()).toHaveLength(2);
  });

  it('a template send and an inline send to the same person at once: the template call gets its own', async () => {
    // The inline send is created at once but answered late; the template send meanwhile fails 503.
    sandbox.faults.add({ route: 'POST /emails', mode: 'delay', at: 'after', ms: 600, times: 1 });
    const inline = first.email.send(login('777777'));
    for (let i = 0; i < 200 && sandbox.messages().length === 0; i++)
      await new Promise((r) => setTimeout(r, 5));
    sandbox.faults.add({ route: 'POST /emails', mode: 'status', status: 503, times: 1 });
    const template = await first.email.send({ from, to, templateId: 1, variables: { name: 'Ada' } });
    const own = await inline;
    expect(bodyOf(template)).toContain('Hello Ada');
    expect(bodyOf(own)).toBe('Your code is 777777');
    expect(template.id).not.toBe(own.id);
    expect(sandbox.messages()).toHaveLength(2);
  });

  it('a record a batch returned is never adopted by a later uncertain send to the same person', async () => {
    const [batched] = await first.email.sendBatch([login('888888')]);
    sandbox.faults.add({ route: 'POST /emails', mode: 'drop-before', times: 1 });
    const mine = await first.email.send(login('999999'));
    expect(mine.id).not.toBe(batched.id);
    expect(bodyOf(mine)).toBe('Your code is 999999');
    expect(sandbox.messages()).toHaveLength(2);
  });

  it('identical mail from another process (same body too) is never taken: the key settles it', async () => {
    await second.email.send(login('000000'));
    sandbox.faults.add({ route: 'POST /emails', mode: 'status', status: 502, times: 1 });
    const mine = await first.email.send(login('000000'));
    const held = sandbox.messages();
    expect(held).toHaveLength(2);
    expect(held.map((m) => m.id)).toContain(mine.id);
  });

  it('findSent answers with proof only, and says how sure it is', async () => {
    const since = new Date(Date.now() - 1000);
    const a = await second.email.send(login('121212'));
    await second.email.send(login('343434'));
    const proven = await first.email.findSent(login('121212'), { since });
    expect(proven).toMatchObject({ certainty: 'proven', record: { id: a.id } });
    expect(proven.candidates).toHaveLength(2);
    // Held now: asked again, this instance will not hand the same record out twice.
    expect((await first.email.findSent(login('121212'), { since })).record).toBeNull();
    const none = await first.email.findSent(login('565656'), { since });
    expect(none).toMatchObject({ certainty: 'unproven', record: null });
    const template = await first.email.findSent(
      { from, to, templateId: 1, variables: { name: 'Ada' } },
      { since },
    );
    expect(template.certainty).toBe('unproven');
    expect(template.record).toBeNull();
    const nobody = await first.email.findSent({ ...login('1'), to: ['nobody@example.com'] }, { since });
    expect(nobody).toEqual({ record: null, certainty: 'none', candidates: [], held: [] });
  });

  it('with tracking on, the look-up still recognises its own html among look-alikes', async () => {
    const html = (code: string) =>
      `<p>Code <b>${code}</b> <a href="https://example.com/x?c=${code}">open</a></p>`;
    const input = (code: string) => ({
      from,
      to,
      subject,
      html: html(code),
      trackOpens: true,
      trackClicks: true,
    });
    await second.email.send(input('101010'));
    sandbox.faults.add({ route: 'POST /emails', mode: 'drop-after', times: 1 });
    const mine = await first.email.send(input('202020'));
    const held = sandbox.messages().find((m) => m.id === mine.id);
    expect(held?.html).toContain('<b>202020</b>');
    expect(sandbox.messages()).toHaveLength(2);
  });
});

/** Sends `input` from another Node process (its own `EmailModule`, nothing shared) and returns the record id. */
async function sendFromAnotherProcess(sandbox: EmailSandbox, input: unknown): Promise<number> {
  const root = process.cwd();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    EMAIL_BASE_URL: sandbox.baseUrl,
    EMAIL_API_KEY: sandbox.apiKey,
    EMAIL_INPUT: JSON.stringify(input),
  };
  delete env.NODE_OPTIONS;
  const register = pathToFileURL(join(root, 'test/nest/support/ts-esm.register.mjs')).href;
  const script = join(root, 'test/delivery/support/send.child.mjs');
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', register, script, pathToFileURL(join(root, 'lib')).href],
    { env, timeout: 60_000 },
  );
  const id = Number(stdout.trim());
  if (!Number.isInteger(id)) throw new Error(`the other process said: ${stdout}`);
  return id;
}

describe('look-alike email sent by two real processes', () => {
  const sandbox = useSandbox({ reset: true });
  let app: { email: EmailService; close: () => Promise<void> };
  beforeAll(async () => {
    app = await emailApp({ baseUrl: sandbox.baseUrl, apiKey: sandbox.apiKey, timeoutMs: 10_000 });
  });
  afterAll(async () => {
    await app.close();
  });
  const bodyOf = (id: number) => sandbox.messages().find((m) => m.id === id)?.bodyText;

  it('the other process sent a look-alike just before; this call, last-resort looked up, keeps its own', async () => {
    const theirs = await sendFromAnotherProcess(sandbox, login('314159'));
    sandbox.faults.add({ route: 'POST /emails', mode: 'drop-after', times: 1 });
    const mine = await app.email.send(login('271828'), { maxRetries: 0 });
    expect(bodyOf(mine.id)).toBe('Your code is 271828');
    expect(bodyOf(theirs)).toBe('Your code is 314159');
    expect(mine.id).not.toBe(theirs);
  }, 90_000);

  it("a template send with no retry left never adopts the other process's message: uncertain instead", async () => {
    await sendFromAnotherProcess(sandbox, { from, to, subject: 'Invoice #42', text: 'Amount due: 42' });
    sandbox.faults.add({ route: 'POST /emails', mode: 'drop-before', times: 1 });
    const err = await app.email
      .send({ from, to, templateId: 1, variables: { name: 'Ada' } }, { maxRetries: 0 })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toMatchObject({ name: 'EmailSendUncertainError' });
    expect(sandbox.messages()).toHaveLength(1);
  }, 90_000);
});

describe('look-alike email against a scripted server', () => {
  let server: ScriptedServer;
  let app: { email: EmailService; close: () => Promise<void> };
  afterEach(async () => {
    await app.close();
    await server.close();
  });

  it('the log holds only a look-alike with another body: no record is taken, the call ends uncertain without a key', async () => {
    server = await startScriptedServer();
    const now = new Date().toISOString();
    const other = emailLogJson({
      id: 5,
      fromAddress: from,
      toAddresses: to,
      subject,
      createdAt: now,
      updatedAt: now,
    });
    server.handle((req, res) => {
      if (req.method === 'POST') return json(res, 503, { error: 'busy' });
      if (req.url === '/emails/5')
        return json(res, 200, { ...other, html: null, bodyText: 'Your code is 1' });
      return json(res, 200, [other]);
    });
    app = await emailApp({ baseUrl: server.url, idempotency: 'off', timeoutMs: 5000 });
    const err = await app.email.send(login('2')).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ name: 'EmailUnavailableError', outcome: 'uncertain' });
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'POST /emails',
      'GET /emails?limit=100',
      'GET /emails/5',
    ]);
  });
});

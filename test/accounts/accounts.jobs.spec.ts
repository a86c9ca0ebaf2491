/**
 * Issue 35 on both engines (the queue on real Redis, the outbox on real PostgreSQL): jobs store the account
 * id, never a key; the worker resolves the key at each attempt; a rotation after an uncertain attempt never
 * makes a second email; a 429 for one account pauses that account alone, without holding a worker, and
 * spends no attempt.
 */
import type { EmailAccount } from '../../lib/index.js';
import { EmailAccountError } from '../../lib/index.js';
import { EmailSandbox, type SandboxMailbox } from '../../lib/testing/index.js';
import { ENGINES, errorOf, lookAlike, posts, sleep, until, useEngine } from '../jobs/jobs.support.js';

describe.each(ENGINES)('accounts on the %s', (name) => {
  const engine = useEngine(name);
  const boxes: SandboxMailbox[] = [];
  afterEach(async () => {
    await Promise.all(boxes.splice(0).map((b) => b.close()));
  });

  const box = (label: string): SandboxMailbox => {
    const b = engine.sandbox.mailbox({ name: label });
    boxes.push(b);
    return b;
  };

  it("sends each job with its account's key; stores the account id and never a key", async () => {
    const acme = box('acme');
    const globex = box('globex');
    const table: Record<string, EmailAccount> = {
      acme: { apiKey: acme.apiKey },
      globex: { apiKey: globex.apiKey },
    };
    const app = await engine.app({ email: { apiKey: undefined, accounts: (id) => table[id] ?? null } });
    const a = await app.jobs.send(lookAlike('for acme'), { account: 'acme', jobId: 'order-1' });
    const g = await app.jobs.send(lookAlike('for globex'), { account: 'globex', jobId: 'order-2' });
    // the key of a job is derived from its account and its id
    expect(a.idempotencyKey).toBe(app.jobs.keyFor('order-1', { account: 'acme' }));
    expect(a.idempotencyKey).not.toBe(app.jobs.keyFor('order-1'));
    const ra = await app.jobs.waitFor(a.jobId, { timeoutMs: 15_000 });
    const rg = await app.jobs.waitFor(g.jobId, { timeoutMs: 15_000 });
    expect(acme.message(ra.id)?.bodyText).toBe('for acme');
    expect(globex.message(rg.id)?.bodyText).toBe('for globex');
    expect(acme.messages()).toHaveLength(1);
    expect(globex.messages()).toHaveLength(1);

    const stored = await engine.dump(app);
    expect(stored).toContain('acme'); // the account id is kept...
    for (const key of [acme.apiKey, globex.apiKey]) {
      expect(stored).not.toContain(key); // ...its key never, in any encoding
      expect(stored).not.toContain(Buffer.from(key).toString('base64'));
      expect(stored).not.toContain(Buffer.from(key).toString('hex'));
    }
  });

  it('refuses an unknown account before anything is queued', async () => {
    const app = await engine.app({ email: { apiKey: undefined, accounts: () => null } });
    const err = await errorOf(app.jobs.send(lookAlike('x'), { account: 'initech', jobId: 'never-queued' }));
    expect(err).toBeInstanceOf(EmailAccountError);
    expect(err).toMatchObject({ accountId: 'initech', problem: 'unknown', outcome: 'not-sent' });
    expect(await app.jobs.status('never-queued')).toBeNull();
    expect(engine.sandbox.requests()).toHaveLength(0);
  });

  it('a 500 under key K1, then the key rotated to K2: one email, or an honest uncertain end; never two', async () => {
    // One account at the service with two keys; idempotency scoped per key, the stricter reading.
    const k1 = 'sk_test_rotation_key_one_0001';
    const k2 = 'sk_test_rotation_key_two_0002';
    const service = await EmailSandbox.start({
      ref: false,
      keys: [
        { key: k1, account: 'acme' },
        { key: k2, account: 'acme' },
      ],
      idempotencyScope: 'key',
    });
    try {
      service.faults.add({ route: 'POST /emails', mode: 'fail-after', status: 500, times: 1 });
      // The app's store: K1 until the first attempt reached the service, K2 afterwards (rotated meanwhile).
      const accounts = () => ({
        apiKey: service.requests().length === 0 ? k1 : k2,
        baseUrl: service.baseUrl,
      });
      const app = await engine.app({ email: { apiKey: undefined, accounts, accountCacheTtlMs: 1 } });
      const job = await app.jobs.send(lookAlike('Order 7: 3 items'), { account: 'acme', jobId: 'order-7' });
      await until(
        async () => ['sent', 'failed'].includes((await app.jobs.status(job.jobId))?.state ?? ''),
        20_000,
        'the job to end',
      );
      await sleep(500);
      const status = await app.jobs.status(job.jobId);
      expect(service.messages()).toHaveLength(1); // never two
      expect(posts(service)).toHaveLength(1); // nothing sent again under K2
      if (status?.state === 'sent') expect(status.messageId).toBe(service.messages()[0]?.id);
      else expect(status).toMatchObject({ state: 'failed', error: { name: 'EmailSendUncertainError' } });
    } finally {
      await service.close();
    }
  });

  it("a 429 for account A: B's jobs go out while A waits, and A's pause spends no attempt", async () => {
    const a = box('tenant-a');
    const b = box('tenant-b');
    const table: Record<string, EmailAccount> = { a: { apiKey: a.apiKey }, b: { apiKey: b.apiKey } };
    a.faults.add({ route: 'POST /emails', mode: 'status', status: 429, retryAfter: 8, times: 1 });
    // one worker: if A's paused jobs held it, B's email would wait behind them
    const app = await engine.app({
      concurrency: 1,
      email: { apiKey: undefined, accounts: (id) => table[id] ?? null },
    });
    const aJobs = [];
    for (let i = 0; i < 4; i++)
      aJobs.push(await app.jobs.send(lookAlike(`A ${i}`), { account: 'a', jobId: `a-${i}` }));
    await until(() => a.requests().length > 0, 15_000, "A's first attempt");
    const bJobs = [];
    for (let i = 0; i < 4; i++)
      bJobs.push(await app.jobs.send(lookAlike(`B ${i}`), { account: 'b', jobId: `b-${i}` }));
    for (const j of bJobs) await app.jobs.waitFor(j.jobId, { timeoutMs: 20_000 });
    // B is done; A drew its 429 before any of B's was queued and is still waiting out its 8 s
    expect(b.messages()).toHaveLength(4);
    expect(a.messages()).toHaveLength(0);
    for (const j of aJobs) await app.jobs.waitFor(j.jobId, { timeoutMs: 40_000 });
    expect(
      a
        .messages()
        .map((m) => m.bodyText)
        .sort(),
    ).toEqual(['A 0', 'A 1', 'A 2', 'A 3']);
    for (const j of aJobs) expect((await app.jobs.status(j.jobId))?.attempts).toBe(1);
  }, 90_000);

  it("an account over its budget: its jobs wait as delayed jobs, no attempt spent, and B's go out", async () => {
    const a = box('budget-a');
    const b = box('budget-b');
    const table: Record<string, EmailAccount> = {
      a: { apiKey: a.apiKey, rateLimit: { recipients: { limit: 1, intervalMs: 60_000 } } },
      b: { apiKey: b.apiKey },
    };
    const app = await engine.app({
      concurrency: 1,
      email: { apiKey: undefined, accounts: (id) => table[id] ?? null },
    });
    const aJobs = [];
    for (let i = 0; i < 3; i++)
      aJobs.push(await app.jobs.send(lookAlike(`A ${i}`), { account: 'a', jobId: `ba-${i}` }));
    const bJobs = [];
    for (let i = 0; i < 3; i++)
      bJobs.push(await app.jobs.send(lookAlike(`B ${i}`), { account: 'b', jobId: `bb-${i}` }));
    for (const j of bJobs) await app.jobs.waitFor(j.jobId, { timeoutMs: 20_000 });
    // one recipient a minute: one of A's jobs goes (whichever a worker took first), the others take slots
    await until(() => a.messages().length === 1, 20_000, "one of A's jobs");
    expect(b.messages()).toHaveLength(3);
    const statuses = await Promise.all(aJobs.map((j) => app.jobs.status(j.jobId)));
    expect(statuses.filter((s) => s?.state === 'sent')).toHaveLength(1);
    const waiting = statuses.filter((s) => s?.state !== 'sent');
    await until(
      async () =>
        (await Promise.all(waiting.map((s) => app.jobs.status(s!.jobId)))).every(
          (s) => s?.state === 'delayed',
        ),
      20_000,
      "A's other jobs in its line",
    );
    for (const w of waiting) {
      const status = await app.jobs.status(w!.jobId);
      expect(status).toMatchObject({ state: 'delayed', attempts: 0 });
      expect(status!.runAt!.getTime()).toBeGreaterThan(Date.now() + 30_000); // its slot, a minute apart
    }
    const slots = await Promise.all(
      waiting.map(async (w) => (await app.jobs.status(w!.jobId))!.runAt!.getTime()),
    );
    expect(Math.abs(slots[0]! - slots[1]!)).toBeGreaterThan(30_000); // one slot each, not both at once
  }, 60_000);
});

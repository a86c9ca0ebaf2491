/**
 * Issue 50, item 7, on both engines: an account with a budget spaces its jobs in a line of slots (one slot per job,
 * at the pace the budget allows), so that a backlog of one account comes back at that pace instead of taking every
 * worker each time a window opens. That line counts only jobs that will send, when they are due: a job delayed for
 * later, one cancelled, or one whose transaction rolled back holds no slot, and a job that was given a slot and is
 * then cancelled gives it back.
 *
 * Each case is told by order, not by time: an ordinary job of the budgeted account, written after the jobs that
 * must hold no slot, is sent before a marker job of another account (no budget) due a few seconds later. A phantom
 * slot puts the ordinary job behind the marker (15 s and more, in the reproductions).
 */
import type { EmailAccount } from '../../lib/index.js';
import type { SandboxMailbox } from '../../lib/testing/index.js';
import { ENGINES, lookAlike, until, useEngine } from '../jobs/jobs.support.js';

/** The marker's delay: long enough that a job with no phantom ahead goes first, short beside a phantom line. */
const MARKER_MS = 5000;

describe.each(ENGINES)("an account's line on the %s", (name) => {
  const engine = useEngine(name);
  const boxes: SandboxMailbox[] = [];
  let made = 0;
  afterEach(async () => {
    await Promise.all(boxes.splice(0).map((b) => b.close()));
  });

  /** Two accounts: `a` with `limit` recipients per `intervalMs`, `m` (the marker's) without a budget. */
  async function world(limit: number, intervalMs: number) {
    const a = engine.sandbox.mailbox({ name: `line-a-${++made}` });
    const m = engine.sandbox.mailbox({ name: `line-m-${made}` });
    boxes.push(a, m);
    const table: Record<string, EmailAccount> = {
      a: { apiKey: a.apiKey, rateLimit: { recipients: { limit, intervalMs } } },
      m: { apiKey: m.apiKey },
    };
    const email = { apiKey: undefined, accounts: (id: string) => table[id] ?? null };
    return { a, m, email };
  }

  /** When the message with `body` was created in `box` (ms). */
  const sentAt = (box: SandboxMailbox, body: string): number => {
    const found = box.messages().find((msg) => msg.bodyText === body);
    if (!found) throw new Error(`no message "${body}" in ${box.name}`);
    return Date.parse(found.createdAt);
  };

  it('a job delayed for later holds no slot: an ordinary job goes before it', async () => {
    const { a, m, email } = await world(1, 1000);
    const app = await engine.app({ email });
    const later = await app.jobs.send(lookAlike('Your reminder, in 15 s'), { account: 'a', delayMs: 15_000 });
    await app.jobs.send(lookAlike('The marker'), { account: 'm', jobId: 'marker-1', delayMs: MARKER_MS });
    const now = await app.jobs.send(lookAlike('Your code, now'), { account: 'a' });
    await app.jobs.waitFor(now.jobId, { timeoutMs: 30_000 });
    await app.jobs.waitFor('marker-1', { timeoutMs: 30_000 });
    expect(sentAt(a, 'Your code, now')).toBeLessThan(sentAt(m, 'The marker'));
    expect(await app.jobs.status(later.jobId)).toMatchObject({ state: 'delayed', attempts: 0 });
    expect(await app.jobs.cancel(later.jobId)).toEqual({ cancelled: true });
  }, 60_000);

  it('cancelled jobs hold no slot: an ordinary job written after 30 of them goes at once', async () => {
    const { a, m, email } = await world(2, 1000);
    const app = await engine.app({ email });
    // due in 30 s, so that all 30 are cancelled before any attempt, however slow the machine (a worker runs)
    const written = await app.jobs.sendMany(
      Array.from({ length: 30 }, (_, i) => ({
        input: lookAlike(`Offer ${i}`),
        options: { account: 'a', jobId: `offer-${i}`, delayMs: 30_000 },
      })),
    );
    for (const { jobId } of written) expect(await app.jobs.cancel(jobId)).toEqual({ cancelled: true });
    await app.jobs.send(lookAlike('The marker'), { account: 'm', jobId: 'marker-2', delayMs: MARKER_MS });
    const now = await app.jobs.send(lookAlike('Your code, now'), { account: 'a' });
    await app.jobs.waitFor(now.jobId, { timeoutMs: 40_000 });
    await app.jobs.waitFor('marker-2', { timeoutMs: 40_000 });
    expect(sentAt(a, 'Your code, now')).toBeLessThan(sentAt(m, 'The marker'));
    expect(a.messages().map((msg) => msg.bodyText)).toEqual(['Your code, now']);
  }, 90_000);

  it('a job given a slot and then cancelled gives its slot back', async () => {
    // One recipient per 4 s: with the slots given back the ordinary job is two slots out (about 8 s), with them
    // kept it is five (about 20 s); the marker sits between (14 s), far from both on a busy machine.
    const { a, m, email } = await world(1, 4000);
    const app = await engine.app({ email, concurrency: 4 });
    // five jobs due at once: one goes, four wait in the line (4, 8, 12, 16 s)
    const burst: Array<{ jobId: string }> = [];
    for (let i = 0; i < 5; i++)
      burst.push(await app.jobs.send(lookAlike(`Burst ${i}`), { account: 'a', jobId: `burst-${i}` }));
    await until(async () => a.messages().length === 1, 20_000, 'the first of the burst');
    await until(
      async () => {
        const states = await Promise.all(burst.map((j) => app.jobs.status(j.jobId)));
        return states.filter((s) => s?.state === 'delayed').length === 4;
      },
      20_000,
      'the rest of the burst in the line',
    );
    // the last three leave the line; an ordinary job then comes after the one still in it, not after five
    const waiting = [];
    for (const j of burst) if ((await app.jobs.status(j.jobId))?.state === 'delayed') waiting.push(j.jobId);
    for (const jobId of waiting.slice(1)) expect(await app.jobs.cancel(jobId)).toEqual({ cancelled: true });
    await app.jobs.send(lookAlike('The marker'), { account: 'm', jobId: 'marker-3', delayMs: 14_000 });
    const now = await app.jobs.send(lookAlike('Your code, soon'), { account: 'a' });
    await app.jobs.waitFor(now.jobId, { timeoutMs: 40_000 });
    await app.jobs.waitFor('marker-3', { timeoutMs: 40_000 });
    expect(sentAt(a, 'Your code, soon')).toBeLessThan(sentAt(m, 'The marker'));
    expect(a.messages()).toHaveLength(3);
  }, 90_000);

  if (name === 'outbox')
    it('jobs whose transaction rolled back hold no slot', async () => {
      const { a, m, email } = await world(2, 1000);
      const app = await engine.app({ email });
      await engine
        .inTx(async (tx) => {
          await app.outbox!.sendMany(
            Array.from({ length: 30 }, (_, i) => ({
              input: lookAlike(`Rolled back ${i}`),
              options: { account: 'a', jobId: `rb-${i}` },
            })),
            { tx },
          );
          throw new Error('roll back');
        })
        .catch(() => undefined);
      await app.jobs.send(lookAlike('The marker'), { account: 'm', jobId: 'marker-4', delayMs: MARKER_MS });
      const now = await app.jobs.send(lookAlike('Your code, now'), { account: 'a' });
      await app.jobs.waitFor(now.jobId, { timeoutMs: 40_000 });
      await app.jobs.waitFor('marker-4', { timeoutMs: 40_000 });
      expect(sentAt(a, 'Your code, now')).toBeLessThan(sentAt(m, 'The marker'));
      expect(await app.jobs.status('rb-0')).toBeNull();
    }, 90_000);
});

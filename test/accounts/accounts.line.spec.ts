/**
 * Issue 50, item 7, on both engines: an account with a budget spaces its jobs in a line of slots (one slot per job,
 * at the pace the budget allows), so that a backlog of one account comes back at that pace instead of taking every
 * worker each time a window opens. That line counts only jobs that will send, when they are due: a job delayed for
 * later, one cancelled, or one whose transaction rolled back holds no slot, and a job that was given a slot and is
 * then cancelled gives it back.
 *
 * Each case is told by the line itself, not by elapsed time: an ordinary job of the budgeted account, written
 * after the jobs that must hold no slot, never waits in the line for longer than one window (a phantom slot puts it
 * 15 s and more out, in the reproductions), read from the job's `runAt` while it waits; a job that was in the
 * line gets the slot after those still in it.
 */
import type { EmailAccount } from '../../lib/index.js';
import type { SandboxMailbox } from '../../lib/testing/index.js';
import { ENGINES, lookAlike, until, useEngine } from '../jobs/jobs.support.js';

describe.each(ENGINES)("an account's line on the %s", (name) => {
  const engine = useEngine(name);
  const boxes: SandboxMailbox[] = [];
  let made = 0;
  afterEach(async () => {
    await Promise.all(boxes.splice(0).map((b) => b.close()));
  });

  /** The account `a`, with `limit` recipients per `intervalMs`. */
  async function world(limit: number, intervalMs: number) {
    const a = engine.sandbox.mailbox({ name: `line-a-${++made}` });
    boxes.push(a);
    const table: Record<string, EmailAccount> = {
      a: { apiKey: a.apiKey, rateLimit: { recipients: { limit, intervalMs } } },
    };
    const email = { apiKey: undefined, accounts: (id: string) => table[id] ?? null };
    return { a, email };
  }

  /**
   * Follows a job until it is sent: the longest it was set to wait in the line, in ms (its `runAt` while `delayed`,
   * from the moment it was seen so). 0 when it never waited there.
   */
  async function longestLineWait(
    app: Awaited<ReturnType<typeof engine.app>>,
    jobId: string,
  ): Promise<number> {
    let longest = 0;
    await until(
      async () => {
        const status = await app.jobs.status(jobId);
        if (status?.state === 'delayed') longest = Math.max(longest, status.runAt!.getTime() - Date.now());
        if (status?.state === 'failed') throw new Error(`${jobId} failed: ${status.error?.message}`);
        return status?.state === 'sent';
      },
      40_000,
      `${jobId} sent`,
    );
    return longest;
  }

  it('a job delayed for later holds no slot: an ordinary job goes before it', async () => {
    const { a, email } = await world(1, 1000);
    const app = await engine.app({ email });
    const later = await app.jobs.send(lookAlike('Your reminder, in 15 s'), { account: 'a', delayMs: 15_000 });
    const now = await app.jobs.send(lookAlike('Your code, now'), { account: 'a' });
    expect(await longestLineWait(app, now.jobId)).toBeLessThanOrEqual(1000);
    expect(a.messages().map((msg) => msg.bodyText)).toEqual(['Your code, now']);
    expect(await app.jobs.status(later.jobId)).toMatchObject({ state: 'delayed', attempts: 0 });
    expect(await app.jobs.cancel(later.jobId)).toEqual({ cancelled: true });
  }, 60_000);

  it('cancelled jobs hold no slot: an ordinary job written after 30 of them goes at once', async () => {
    const { a, email } = await world(2, 1000);
    const app = await engine.app({ email });
    // due in 30 s, so that all 30 are cancelled before any attempt, however slow the machine (a worker runs)
    const written = await app.jobs.sendMany(
      Array.from({ length: 30 }, (_, i) => ({
        input: lookAlike(`Offer ${i}`),
        options: { account: 'a', jobId: `offer-${i}`, delayMs: 30_000 },
      })),
    );
    for (const { jobId } of written) expect(await app.jobs.cancel(jobId)).toEqual({ cancelled: true });
    const now = await app.jobs.send(lookAlike('Your code, now'), { account: 'a' });
    expect(await longestLineWait(app, now.jobId)).toBeLessThanOrEqual(1000);
    expect(a.messages().map((msg) => msg.bodyText)).toEqual(['Your code, now']);
  }, 90_000);

  it('a job given a slot and then cancelled gives its slot back', async () => {
    // One recipient per 4 s. Told by the line itself, not by a marker's time: the ordinary job written after the
    // cancels gets the slot after the one job still in the line (at most one slot past it, or past the moment it
    // entered the line when that slot is already over); with the cancelled slots kept it would come three slots
    // (12 s) later still, however busy the machine.
    const SLOT_MS = 4000;
    const { a, email } = await world(1, SLOT_MS);
    const app = await engine.app({ email, concurrency: 4 });
    // five jobs due at once: one goes, four wait in the line (4, 8, 12, 16 s)
    const burst: Array<{ jobId: string }> = [];
    for (let i = 0; i < 5; i++)
      burst.push(await app.jobs.send(lookAlike(`Burst ${i}`), { account: 'a', jobId: `burst-${i}` }));
    await until(async () => a.messages().length === 1, 20_000, 'the first of the burst');
    const delayed = async (jobId: string) => {
      const status = await app.jobs.status(jobId);
      return status?.state === 'delayed' ? status : undefined;
    };
    await until(
      async () => (await Promise.all(burst.map((j) => delayed(j.jobId)))).filter(Boolean).length === 4,
      20_000,
      'the rest of the burst in the line',
    );
    // the last three leave the line; the first of the four stays in it
    const inLine = [];
    for (const j of burst) {
      const status = await delayed(j.jobId);
      if (status) inLine.push(status);
    }
    inLine.sort((x, y) => x.runAt!.getTime() - y.runAt!.getTime());
    for (const { jobId } of inLine.slice(1))
      expect(await app.jobs.cancel(jobId)).toEqual({ cancelled: true });
    const kept = inLine[0].runAt!.getTime();
    const now = await app.jobs.send(lookAlike('Your code, soon'), { account: 'a' });
    let slot: number | undefined;
    await until(
      async () => {
        const status = await app.jobs.status(now.jobId);
        if (status?.state === 'delayed') slot = status.runAt!.getTime();
        return slot !== undefined || status?.state === 'sent';
      },
      30_000,
      'the ordinary job in the line (or sent)',
    );
    const seen = Date.now();
    // sent before it was seen in the line: it needed no slot at all, so none was kept for the cancelled jobs
    if (slot !== undefined) expect(slot).toBeLessThanOrEqual(Math.max(kept, seen) + SLOT_MS + SLOT_MS / 4);
    await app.jobs.waitFor(now.jobId, { timeoutMs: 40_000 });
    await app.jobs.waitFor(inLine[0].jobId, { timeoutMs: 40_000 });
    expect(a.messages()).toHaveLength(3);
  }, 90_000);

  if (name === 'outbox')
    it('jobs whose transaction rolled back hold no slot', async () => {
      const { a, email } = await world(2, 1000);
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
      const now = await app.jobs.send(lookAlike('Your code, now'), { account: 'a' });
      expect(await longestLineWait(app, now.jobId)).toBeLessThanOrEqual(1000);
      expect(a.messages().map((msg) => msg.bodyText)).toEqual(['Your code, now']);
      expect(await app.jobs.status('rb-0')).toBeNull();
    }, 90_000);
});

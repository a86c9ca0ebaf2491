import { ENGINES, type JobState, lookAlike, postsWith, sleep, useEngine } from './jobs.support.js';

/**
 * API.md: "A 429 never spends an attempt and never lets the engine expire the job". The storm lasts several
 * seconds, with Retry-After 2 then 1: longer than the outbox's attempt expiry (`attemptTimeoutMs` 1000, so a
 * job held while waiting out a Retry-After would be expired by pg-boss) and more 429s than `attempts`.
 */
describe.each(ENGINES)('a 429 storm on the %s', (name) => {
  const engine = useEngine(name);

  it('spends no attempt: the job ends sent, one email, attempts 1, and is never failed meanwhile', async () => {
    const app = await engine.app({ attempts: 3, attemptTimeoutMs: 1000, concurrency: 1 });
    const slow = engine.sandbox.faults.add({
      route: 'POST /emails',
      mode: 'status',
      status: 429,
      retryAfter: 2,
      times: 2,
    });
    const storm = engine.sandbox.faults.add({
      route: 'POST /emails',
      mode: 'status',
      status: 429,
      retryAfter: 1,
      times: Infinity,
    });
    const input = lookAlike('Your parcel ships today');
    const { jobId, idempotencyKey } = await app.jobs.send(input, { jobId: 'storm:1' });
    // waiting from the start: no 429 of the storm may end the wait
    const waiting = app.jobs.waitFor(jobId, { timeoutMs: 30_000 });
    waiting.catch(() => undefined);

    const seen = new Set<JobState | 'unknown'>();
    const stormEnds = Date.now() + 6_500;
    while (Date.now() < stormEnds) {
      seen.add((await app.jobs.status(jobId))?.state ?? 'unknown');
      await sleep(250);
    }
    const hits = slow.hits + storm.hits;
    storm.remove();
    slow.remove();

    // the storm did reach the job more often than it has attempts
    expect(hits).toBeGreaterThanOrEqual(4);
    expect(seen).not.toContain('failed');
    expect(seen).not.toContain('unknown');
    expect(seen).not.toContain('sent');

    const record = await waiting;
    expect((await app.jobs.waitFor(jobId, { timeoutMs: 5_000 })).id).toBe(record.id);
    const status = await app.jobs.status(jobId);
    expect(status).toMatchObject({ state: 'sent', attempts: 1, messageId: record.id, idempotencyKey });
    expect(status?.error).toBeUndefined();

    await sleep(1_500);
    expect(engine.sandbox.messages()).toHaveLength(1);
    expect(engine.sandbox.messages()[0]?.bodyText).toBe(input.text);
    const mine = postsWith(engine.sandbox, idempotencyKey);
    expect(mine.filter((p) => p.status === 201)).toHaveLength(1);
    expect(mine.filter((p) => p.status === 429)).toHaveLength(hits);
    // every POST of the run was this job's (one key, never a second one)
    expect(mine).toHaveLength(engine.sandbox.requests().filter((r) => r.method === 'POST').length);
  }, 60_000);

  it('jobs that look alike all end sent with their own message after the storm, none spends an attempt', async () => {
    const app = await engine.app({ attempts: 2, attemptTimeoutMs: 1000, concurrency: 2 });
    const storm = engine.sandbox.faults.add({
      route: 'POST /emails',
      mode: 'status',
      status: 429,
      retryAfter: 1,
      times: Infinity,
    });
    const bodies = ['Code 1001', 'Code 1002', 'Code 1001', 'Code 1003'];
    const queued = await app.jobs.sendMany(
      bodies.map((text, i) => ({ input: lookAlike(text), options: { jobId: `storm-many:${i}` } })),
    );
    const failedMeanwhile: string[] = [];
    const stormEnds = Date.now() + 4_000;
    while (Date.now() < stormEnds) {
      for (const q of queued)
        if ((await app.jobs.status(q.jobId))?.state === 'failed') failedMeanwhile.push(q.jobId);
      await sleep(300);
    }
    expect(storm.hits).toBeGreaterThanOrEqual(2);
    storm.remove();
    expect(failedMeanwhile).toEqual([]);

    const records = await Promise.all(queued.map((q) => app.jobs.waitFor(q.jobId, { timeoutMs: 20_000 })));
    expect(new Set(records.map((r) => r.id)).size).toBe(bodies.length);
    for (const [i, q] of queued.entries()) {
      expect(await app.jobs.status(q.jobId)).toMatchObject({ state: 'sent', attempts: 1 });
      expect(engine.sandbox.message(records[i]!.id)?.bodyText).toBe(bodies[i]);
    }
    await sleep(1_000);
    expect(engine.sandbox.messages()).toHaveLength(bodies.length);
  }, 60_000);
});

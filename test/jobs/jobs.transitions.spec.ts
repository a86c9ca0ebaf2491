import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EmailBadRequestError } from '../../lib/index.js';
import { recordOf } from '../../lib/jobs/job-record.helpers.js';
import type { StoredEmailJob } from '../../lib/jobs/email-job.interface.js';
import { JOB_MOVES, jobMoveOf, moveJob, type JobState } from '../../lib/policy/job.policy.js';
import { ENGINES, errorOf, lookAlike, postsWith, useEngine } from './jobs.support.js';

/**
 * Issue 51: the job state transition table (`JOB_MOVES`, lib/policy/job.policy.ts) is the one place that says how a
 * job moves. Read here three ways: every move the code writes (`moveJob(record, to, by)` in lib/) is in the table,
 * and no file of the job layer sets a job's state by hand; docs/jobs.md prints the same rows; and on both engines a
 * job driven through every kind of move (sent, retried, failed for good, a 429, cancelled, rescheduled) ends as the
 * table lets it, with `moveJob` refusing on the way any move the table does not have.
 */
const LIB = join(import.meta.dirname, '../../lib');

function sourcesOf(...dirs: string[]): Array<{ file: string; text: string }> {
  return dirs.flatMap((dir) =>
    readdirSync(join(LIB, dir))
      .filter((f) => f.endsWith('.ts'))
      .map((f) => ({ file: `${dir}/${f}`, text: readFileSync(join(LIB, dir, f), 'utf8') })),
  );
}

const STATES: readonly JobState[] = ['waiting', 'active', 'sent', 'failed', 'cancelled'];

describe('the job state transition table', () => {
  it('every move the code writes is in the table', () => {
    const calls = sourcesOf('jobs', 'queue', 'outbox', 'policy').flatMap(({ file, text }) =>
      [...text.matchAll(/moveJob\([\s\S]*?'(waiting|active|sent|failed|cancelled)',\s*'(\w+)'/g)].map(
        (m) => ({
          file,
          to: m[1] as JobState,
          by: m[2],
        }),
      ),
    );
    // the job routine (sent, retried, failed, given back), cancel, reschedule and a new job at least
    expect(new Set(calls.map((c) => `${c.to} by ${c.by}`))).toEqual(
      new Set([
        'waiting by write',
        'active by engine',
        'sent by worker',
        'waiting by worker',
        'failed by worker',
        'cancelled by cancel',
        'waiting by reschedule',
      ]),
    );
    for (const c of calls)
      expect([c.file, c.to, c.by, JOB_MOVES.some((m) => m.to === c.to && m.by === c.by)]).toEqual([
        c.file,
        c.to,
        c.by,
        true,
      ]);
  });

  it("no file of the job layer sets a job's state by hand (only the engines' own states are read into one)", () => {
    const byHand = sourcesOf('jobs', 'queue', 'outbox').flatMap(({ file, text }) =>
      // an object's `state: '...'` (a type's union of states, `state: 'a' | 'b'`, sets nothing)
      [...text.matchAll(/\bstate\s*:\s*'(waiting|active|sent|failed|cancelled)'(?!\s*\|)/g)].map(
        (m) => `${file}: ${m[0]}`,
      ),
    );
    // job-record.helpers.ts reads an engine's state (BullMQ's, pg-boss's) as the module's: that is its one role
    expect(byHand.filter((line) => !line.startsWith('jobs/job-record.helpers.ts'))).toEqual([]);
  });

  it("the module's reading of an engine's states gives only states the table reaches", () => {
    const stored = {
      state: 'waiting',
      takenBack: 0,
      attempts: 0,
      interruptions: 0,
      uncertain: false,
    } as const;
    const reached = new Set(JOB_MOVES.map((m) => m.to));
    for (const engine of ['waiting', 'active', 'completed', 'failed', 'cancelled'] as const)
      for (const kept of ['waiting', 'cancelled', 'failed'] as const) {
        const record = recordOf({ ...stored, state: kept, runAt: 0 } as unknown as StoredEmailJob, {
          state: engine,
          takenBack: 0,
        });
        expect([engine, kept, reached.has(record.state)]).toEqual([engine, kept, true]);
      }
  });

  it('moveJob refuses a move that is not in the table, and the final states have no way out', () => {
    const job = { state: 'sent' as JobState };
    for (const to of STATES)
      for (const by of ['write', 'engine', 'worker', 'cancel', 'reschedule'] as const)
        expect(() => moveJob(job, to, by)).toThrow(/cannot move from sent/);
    for (const from of ['sent', 'failed', 'cancelled'] as const)
      expect(JOB_MOVES.filter((m) => m.from === from)).toEqual([]);
    expect(jobMoveOf('active', 'cancelled', 'cancel')).toBeUndefined(); // too late: an attempt runs
  });

  it('docs/jobs.md prints the same rows', () => {
    const doc = readFileSync(join(LIB, '../docs/jobs.md'), 'utf8');
    const block = doc.slice(doc.indexOf('<!-- job-moves'), doc.indexOf('<!-- /job-moves -->'));
    const rows = block
      .split('\n')
      .filter((line) => line.startsWith('|'))
      .slice(2) // the header and its rule
      .map((line) =>
        line
          .split('|')
          .slice(1, -1)
          .map((cell) => cell.trim().replaceAll('`', '')),
      );
    expect(rows).toEqual(JOB_MOVES.map((m) => [m.from ?? '(new)', m.to, m.by, m.when]));
  });
});

describe.each(ENGINES)('every kind of move on the %s', (name) => {
  const engine = useEngine(name);

  it('sent, retried, failed for good, paused by a 429, cancelled and rescheduled: each as the table lets it', async () => {
    const app = await engine.app({ attempts: 3 });
    const sandbox = engine.sandbox;
    // a 503 then a 429 for the first sends: one job is retried (active -> waiting by worker), one paused
    sandbox.faults.add({ route: 'POST /emails', mode: 'status', status: 503, times: 1 });
    sandbox.faults.add({
      route: 'POST /emails',
      mode: 'status',
      status: 429,
      retryAfter: 1,
      times: 1,
      skip: 1,
    });
    const retried = await app.jobs.send(lookAlike('Retried'), { jobId: 'moves:retried' });
    const paused = await app.jobs.send(lookAlike('Paused'), { jobId: 'moves:paused' });
    // the sandbox answers 400 to a template it does not know: failed for good
    const bad = { from: 'shop@example.com', to: ['ada@example.com'], templateId: 99_999, variables: {} };
    const failed = await app.jobs.send(bad, { jobId: 'moves:failed' });
    const cancelled = await app.jobs.send(lookAlike('Cancelled'), {
      jobId: 'moves:cancelled',
      delayMs: 60_000,
    });
    const moved = await app.jobs.send(lookAlike('Moved'), { jobId: 'moves:moved', delayMs: 60_000 });
    expect(await app.jobs.cancel(cancelled.jobId)).toEqual({ cancelled: true });
    expect(await app.jobs.reschedule(moved.jobId, { delayMs: 0 })).toEqual({ rescheduled: true });

    for (const job of [retried, paused, moved]) await app.jobs.waitFor(job.jobId, { timeoutMs: 20_000 });
    expect(await errorOf(app.jobs.waitFor(failed.jobId, { timeoutMs: 20_000 }))).toBeInstanceOf(
      EmailBadRequestError,
    );
    expect(await app.jobs.status(retried.jobId)).toMatchObject({ state: 'sent', attempts: 2 });
    expect(await app.jobs.status(paused.jobId)).toMatchObject({ state: 'sent', attempts: 1 });
    expect(await app.jobs.status(failed.jobId)).toMatchObject({ state: 'failed', attempts: 1 });
    expect(await app.jobs.status(cancelled.jobId)).toMatchObject({ state: 'cancelled', attempts: 0 });
    expect(postsWith(sandbox, cancelled.idempotencyKey)).toEqual([]);
    // final states have no way out: a cancel and a reschedule of each say so
    for (const job of [retried, failed, cancelled]) {
      const state = (await app.jobs.status(job.jobId))?.state;
      expect(await app.jobs.cancel(job.jobId)).toEqual({ cancelled: false, state });
      expect(await app.jobs.reschedule(job.jobId, { delayMs: 0 })).toEqual({ rescheduled: false, state });
    }
  }, 60_000);
});

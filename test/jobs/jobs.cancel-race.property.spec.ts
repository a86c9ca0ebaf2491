import fc from 'fast-check';
import type { EmailInput } from '../../lib/interfaces/email-input.interface.js';
import {
  type CancelAnswer,
  ENGINES,
  errorOf,
  lookAlike,
  postsWith,
  sleep,
  templated,
  useEngine,
} from './jobs.support.js';

/**
 * API.md: "Cancel racing the worker: exactly one of 'sent' and 'cancelled'". Jobs of mail as users send it
 * (look-alikes: the same sender, recipients and subject with another body; identical mail under two job ids;
 * template mail with the inline mail's subject) are enqueued with small random delays while the workers run,
 * and each is cancelled at a random moment, through either of two apps on the same jobs (both run workers).
 * For every job, exactly one of:
 *  - cancel answered `{ cancelled: true }`, its status is `cancelled`, `waitFor` is EmailJobCancelledError, and
 *    the service never saw its idempotency key (no attempt may have reached it);
 *  - cancel answered `{ cancelled: false, state: 'active' | 'sent' }`, and the job ends `sent` with exactly one
 *    message of its own (its body, its template variables) created under its key.
 * Real time: no shrinking (endOnFailure). RUNS plans per engine (each plan is 3 to 8 jobs racing two apps' cancels
 * for about 1.5 s); `npm run chaos:queue` / `chaos:outbox` race cancels at volume.
 */
type Mail = { kind: 'inline'; body: number } | { kind: 'template'; order: number };
interface PlannedJob {
  mail: Mail;
  delayMs: number;
  /** Pause before this job is enqueued (after the previous one). */
  gapMs: number;
  /** When cancel is called, after the job was enqueued. */
  cancelAfterMs: number;
  /** Cancel through the other app (another process) than the one that enqueued it. */
  cancelElsewhere: boolean;
}

const mailArb: fc.Arbitrary<Mail> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('inline' as const), body: fc.integer({ min: 0, max: 3 }) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('template' as const), order: fc.integer({ min: 0, max: 1 }) }),
  },
);
const planArb = fc.array(
  fc.record({
    mail: mailArb,
    delayMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 400 })),
    gapMs: fc.integer({ min: 0, max: 60 }),
    cancelAfterMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 700 })),
    cancelElsewhere: fc.boolean(),
  }),
  { minLength: 3, maxLength: 8 },
);

const inputOf = (mail: Mail): EmailInput =>
  mail.kind === 'inline' ? lookAlike(`Your code is ${mail.body}`) : templated(`A-${mail.order}`);

/**
 * Plans per engine. Each run is slow (real workers, up to 0.7 s of cancel delay and 0.6 s of settling: about
 * 1.1 s quiet), so the spec runs a fixed number rather than as many as fit in a time limit: the same runs on a
 * quiet machine and on a busy one (the former 35 s limit per engine held about 30 runs quiet and a handful at
 * load 20).
 */
const RUNS = 12;

describe.each(ENGINES)('cancel racing the %s workers', (name) => {
  const engine = useEngine(name);

  it('every job ends exactly one of sent (one message, its own) and cancelled (never seen by the service)', async () => {
    const app = await engine.app({ concurrency: 3, attempts: 3 });
    // a second app on the same jobs: another process whose workers race the first one's cancel too
    const other = await engine.app({ namespace: app.namespace, concurrency: 2, attempts: 3 });
    let run = 0;
    const totals = { cancelled: 0, sent: 0 };
    const cancelledKeys: string[] = [];
    const sentRecords = new Map<number, string>(); // message id -> job id

    await fc.assert(
      fc.asyncProperty(planArb, async (plan: PlannedJob[]) => {
        run += 1;
        const jobs: Array<{ jobId: string; key: string; input: EmailInput; cancel: Promise<CancelAnswer> }> =
          [];
        for (const [i, planned] of plan.entries()) {
          await sleep(planned.gapMs);
          const input = inputOf(planned.mail);
          const jobId = `race:${run}:${i}`;
          const { idempotencyKey } = await app.jobs.send(input, { jobId, delayMs: planned.delayMs });
          const canceller = planned.cancelElsewhere ? other : app;
          const cancel = sleep(planned.cancelAfterMs).then(() => canceller.jobs.cancel(jobId));
          cancel.catch(() => undefined); // awaited below; handled should an earlier check fail first
          jobs.push({ jobId, key: idempotencyKey, input, cancel });
        }

        for (const job of jobs) {
          const answer = await job.cancel;
          if (answer.cancelled) {
            totals.cancelled += 1;
            cancelledKeys.push(job.key);
            expect([job.jobId, (await app.jobs.status(job.jobId))?.state]).toEqual([job.jobId, 'cancelled']);
            expect(await errorOf(app.jobs.waitFor(job.jobId, { timeoutMs: 5_000 }))).toBeInstanceOf(
              engine.cancelledError,
            );
          } else {
            totals.sent += 1;
            expect([job.jobId, ['active', 'sent'].includes(String(answer.state))]).toEqual([job.jobId, true]);
            const record = await app.jobs.waitFor(job.jobId, { timeoutMs: 20_000 });
            expect([job.jobId, sentRecords.get(record.id)]).toEqual([job.jobId, undefined]);
            sentRecords.set(record.id, job.jobId);
            const status = await app.jobs.status(job.jobId);
            expect([job.jobId, status?.state, status?.messageId]).toEqual([job.jobId, 'sent', record.id]);
            // its own message: its body, or its template and variables
            const message = engine.sandbox.sent().find((m) => m.id === record.id);
            if ('templateId' in job.input && job.input.templateId !== undefined)
              expect([job.jobId, message?.templateId, message?.variables]).toEqual([
                job.jobId,
                job.input.templateId,
                job.input.variables,
              ]);
            else expect([job.jobId, message?.bodyText]).toEqual([job.jobId, job.input.text]);
          }
        }

        // the workers get time to send what they should not; then each key is checked at the service
        await sleep(600);
        for (const job of jobs) {
          const seen = postsWith(engine.sandbox, job.key);
          const answer = await job.cancel;
          if (answer.cancelled) expect([job.jobId, seen]).toEqual([job.jobId, []]);
          else expect([job.jobId, seen.filter((p) => p.status === 201).length]).toEqual([job.jobId, 1]);
        }
        expect(engine.sandbox.messages()).toHaveLength(sentRecords.size);
      }),
      {
        numRuns: RUNS,
        endOnFailure: true,
      },
    );

    // after all runs: a cancelled job never sent late (each run checked its own count)
    await sleep(1_500);
    for (const key of cancelledKeys) expect([key, postsWith(engine.sandbox, key)]).toEqual([key, []]);
    // the property ran, and the race went both ways
    expect(run).toBe(RUNS);
    expect(totals.cancelled).toBeGreaterThan(0);
    expect(totals.sent).toBeGreaterThan(0);
  }, 120_000);
});

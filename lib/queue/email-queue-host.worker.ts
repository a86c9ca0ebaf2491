import type { Job } from 'bullmq';
import { JOB_STORE_FAILURE } from '../policy/job.policy.js';
import type { JobVerdict, StoredEmailJob } from '../jobs/email-job.interface.js';
import { writeWhenStoreAnswers } from '../jobs/email-job.helpers.js';
import { deliveredOf, storedOf } from '../jobs/job-record.helpers.js';
import { type BullMq, loadBullMq, type NestBullMq } from '../peers/optional-peer.loader.js';
import type { ResolvedEmailQueueOptions } from './email-queue.options.js';
import type { EmailQueue } from './email-queue.service.js';

/** What BullMQ's job holds: the job's record as written, and once it failed, its last error for dashboards. */
export type BullJobData = StoredEmailJob & {
  lastError?: { name: string; message: string; outcome?: string };
};

/** BullMQ's failure reason of a job that a cancel reached before any attempt. */
const CANCELLED_REASON = 'cancelled before any attempt (EmailQueue.cancel)';

/**
 * One delivery of a BullMQ job: the job layer decides, this writes the verdict in BullMQ's terms, one write for
 * the outcome. BullMQ's take of the job is the claim (`active`; `stalledCounter` counts the takes cut off by a
 * worker that stalled). A job is never retried by BullMQ's own counter: its data counts attempts, and a job to try
 * again later is moved back to BullMQ's delayed set, which spends nothing. Sent: BullMQ completes it with the
 * message record as its return value. Failed: its data (with the error) is written, and BullMQ fails it for good.
 */
export async function processEmailJob(
  queue: EmailQueue,
  bull: BullMq,
  job: Job<BullJobData>,
  token?: string,
): Promise<unknown> {
  const takenBack = job.stalledCounter ?? 0;
  const { lastError: _shown, ...stored } = job.data;
  const write = (data: BullJobData) => job.updateData(data);
  let verdict: JobVerdict;
  try {
    verdict = await queue.run({
      ...deliveredOf(stored, takenBack),
      keep: (record) => write(storedOf(record, takenBack)),
    });
  } catch {
    // Redis failed under the job before its send (the only write then: an account key's tag). BullMQ would fail
    // its job for good (it has one attempt): it goes back instead once Redis answers, its record as it was.
    return giveBack(bull, job, Date.now() + JOB_STORE_FAILURE.retryMs, token);
  }
  switch (verdict.kind) {
    case 'sent':
      return verdict.log;
    case 'dropped':
      throw new bull.UnrecoverableError(CANCELLED_REASON);
    case 'failed': {
      const { name, message, outcome } = verdict.error as Error & { outcome?: string };
      const lastError = { name, message, ...(outcome !== undefined ? { outcome } : {}) };
      const data = { ...storedOf(verdict.record, takenBack), lastError };
      if (
        !(await writeWhenStoreAnswers(
          () => write(data),
          () => true,
        ))
      )
        return leftToStall(bull);
      throw new bull.UnrecoverableError(message);
    }
    case 'later':
      // A 429: the queue is paused already (every worker, every process); the job goes back as it was.
      if (verdict.pauseMs !== undefined) throw new bull.RateLimitError();
      return giveBack(bull, job, verdict.atMs, token);
    case 'retry': {
      const data = storedOf(verdict.record, takenBack);
      if (
        !(await writeWhenStoreAnswers(
          () => write(data),
          () => true,
        ))
      )
        return leftToStall(bull);
      return giveBack(bull, job, verdict.atMs, token);
    }
  }
}

/**
 * Moves the job back to BullMQ's delayed set until `atMs`. When Redis cannot take even that (a failover),
 * never a thrown Redis error, which would fail the BullMQ job for good: the job stays active, its lock runs
 * out, and BullMQ's stalled check gives it to a worker again.
 */
async function giveBack(bull: BullMq, job: Job<BullJobData>, atMs: number, token?: string): Promise<never> {
  await job.moveToDelayed(Math.ceil(atMs), token).catch(() => undefined);
  throw new bull.DelayedError();
}

/**
 * An outcome Redis did not take for `JOB_STORE_FAILURE.giveUpMs`: the job is left active, its lock runs out, and
 * BullMQ's stalled check gives it to a worker again, which counts this attempt as cut off (its send may have gone
 * out: the same key replays it).
 */
function leftToStall(bull: BullMq): never {
  throw new bull.DelayedError();
}

/** BullMQ `Worker` options the queue sets, whoever starts the worker. */
export function emailWorkerOptions(o: ResolvedEmailQueueOptions): Record<string, unknown> {
  return {
    concurrency: o.concurrency,
    // BullMQ applies a queue-wide pause (queue.rateLimit) only to workers that have a limiter.
    limiter: { max: Number.MAX_SAFE_INTEGER, duration: 1000 },
    // A worker waits out such a pause in steps of at most this, and BullMQ's close cuts short only the step
    // under way when it starts: a worker that starts one just after (its job in flight ends with the 429)
    // still closes within `closeTimeoutMs` instead of at the end of the pause (up to a minute).
    maximumRateLimitDelay: Math.min(30_000, Math.max(100, o.closeTimeoutMs / 2)),
    ...o.workerOptions,
    // The job's data counts worker deaths (`maxStalledCount`), so BullMQ never fails a job for them.
    maxStalledCount: Number.MAX_SAFE_INTEGER,
  };
}

/**
 * The queue's processor for `@nestjs/bullmq`: a `WorkerHost` class marked `@Processor(queueName)`, made
 * for this queue's name, which `@nestjs/bullmq` finds among the app's providers and starts like the app's
 * own processors (so its dashboards and `@OnWorkerEvent` tooling see it).
 */
export function createEmailQueueHost(
  nest: NestBullMq,
  o: ResolvedEmailQueueOptions,
  queue: EmailQueue,
): object {
  class EmailQueueProcessor extends nest.WorkerHost {
    process(job: Job<BullJobData>, token?: string): Promise<unknown> {
      return processEmailJob(queue, loadBullMq(), job, token);
    }
  }
  const configKey = o.bullModule?.configKey;
  nest.Processor(
    { name: o.queueName, ...(configKey !== undefined ? { configKey } : {}) },
    emailWorkerOptions(o),
  )(EmailQueueProcessor);
  return new EmailQueueProcessor();
}

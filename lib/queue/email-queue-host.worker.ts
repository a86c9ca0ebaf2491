import type { Job } from 'bullmq';
import type { EmailInput } from '../interfaces/email-input.interface.js';
import { type BullMq, loadBullMq, type NestBullMq } from '../peers/optional-peer.loader.js';
import type { ResolvedEmailQueueOptions } from './email-queue.options.js';
import type { EmailQueue } from './email-queue.service.js';

/** How soon a job is run again after Redis failed under it and answers again. */
const STORE_RETRY_MS = 500;
/** How long a worker waits for Redis to answer again before it gives such a job back all the same. */
const STORE_WAIT_MS = 15_000;

/**
 * What BullMQ's job holds, for dashboards: the job id, its key and input, and once it failed its last error (the
 * module's record, read by the worker, holds the rest).
 */
export interface BullJobData {
  jobId: string;
  idempotencyKey: string;
  input?: EmailInput;
  lastError?: { name: string; message: string; outcome?: string };
}

/**
 * One delivery of a BullMQ job: the job layer decides, this carries it out in BullMQ's terms. A job is never
 * retried by BullMQ's own counter: the job's record counts attempts, and a job to try again later is moved
 * back to BullMQ's delayed set, which spends nothing.
 */
export async function processEmailJob(
  queue: EmailQueue,
  bull: BullMq,
  job: Job<BullJobData>,
  token?: string,
): Promise<unknown> {
  let verdict: Awaited<ReturnType<EmailQueue['run']>>;
  try {
    verdict = await queue.run(job.data.jobId);
  } catch {
    // Redis failed under the job (a failover, a timeout: the layer's only throws): BullMQ would fail its job
    // for good (it has one attempt) and leave the record behind. Run it again once the job's record can be
    // read again (a failover is over), as a job whose worker died: the record counts one interruption.
    const deadline = Date.now() + STORE_WAIT_MS;
    while (
      Date.now() < deadline &&
      !(await queue.status(job.data.jobId).then(
        () => true,
        () => false,
      ))
    )
      await new Promise((r) => setTimeout(r, 250));
    return giveBack(bull, job, Date.now() + STORE_RETRY_MS, token);
  }
  switch (verdict.kind) {
    case 'sent':
      return verdict.record;
    case 'dropped':
      return null;
    case 'failed': {
      const { name, message, outcome } = verdict.error as Error & { outcome?: string };
      const lastError = { name, message, ...(outcome !== undefined ? { outcome } : {}) };
      // shown by dashboards beside BullMQ's failedReason; the record keeps the error whatever happens here
      await job.updateData({ ...job.data, lastError }).catch(() => undefined);
      throw new bull.UnrecoverableError(message);
    }
    case 'later':
      // A 429: the queue is paused already (every worker, every process); the job goes back as it was.
      if (verdict.pauseMs !== undefined) throw new bull.RateLimitError();
      return giveBack(bull, job, verdict.atMs, token);
    case 'retry':
      return giveBack(bull, job, verdict.atMs, token);
  }
}

/**
 * Moves the job back to BullMQ's delayed set until `atMs`. When Redis cannot take even that (a failover),
 * never a thrown Redis error, which would fail the BullMQ job for good: the job stays active, its lock runs
 * out, and BullMQ's stalled check gives it to a worker again.
 */
async function giveBack(bull: BullMq, job: Job<BullJobData>, atMs: number, token?: string): Promise<never> {
  await job.moveToDelayed(atMs, token).catch(() => undefined);
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
    // The job's record counts worker deaths (`maxStalledCount`), so BullMQ never fails a job for them.
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

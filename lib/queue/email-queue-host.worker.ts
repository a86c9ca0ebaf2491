import type { Job } from 'bullmq';
import { type BullMq, loadBullMq, type NestBullMq } from '../peers/optional-peer.loader.js';
import type { ResolvedEmailQueueOptions } from './email-queue.options.js';
import type { EmailQueue } from './email-queue.service.js';

/** What BullMQ's job holds: the job id; the module's record holds the rest. */
export interface BullJobData {
  jobId: string;
  idempotencyKey: string;
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
  const verdict = await queue.run(job.data.jobId);
  switch (verdict.kind) {
    case 'sent':
      return verdict.record;
    case 'dropped':
      return null;
    case 'failed':
      throw new bull.UnrecoverableError(verdict.error.message);
    case 'later':
      // A 429: the queue is paused already (every worker, every process); the job goes back as it was.
      if (verdict.pauseMs !== undefined) throw new bull.RateLimitError();
      await job.moveToDelayed(verdict.atMs, token);
      throw new bull.DelayedError();
    case 'retry':
      await job.moveToDelayed(verdict.atMs, token);
      throw new bull.DelayedError();
  }
}

/** BullMQ `Worker` options the queue sets, whoever starts the worker. */
export function emailWorkerOptions(o: ResolvedEmailQueueOptions): Record<string, unknown> {
  return {
    concurrency: o.concurrency,
    // BullMQ applies a queue-wide pause (queue.rateLimit) only to workers that have a limiter.
    limiter: { max: Number.MAX_SAFE_INTEGER, duration: 1000 },
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

import type { Job } from 'bullmq';
import { runEmailJob } from '../jobs/email-job.engine.js';
import type { EmailJobData } from '../jobs/email-job.interface.js';
import type { EmailLog } from '../interfaces/email-records.interface.js';
import type { EmailService } from '../service/email.service.js';
import type { BullMq } from '../peers/optional-peer.loader.js';

/** What the BullMQ worker needs besides the job. */
export interface EmailJobProcessorDeps {
  bull: BullMq;
  email: EmailService;
  /** Pauses the whole queue (every process) for this long. */
  rateLimit: (ms: number) => Promise<void>;
  onRateLimited?: (jobId: string, ms: number) => void;
  /** Worker deaths a job survives; past it the job fails uncertain. */
  maxStalledCount: number;
}

/**
 * A BullMQ job through the one job-attempt routine (`lib/jobs/email-job.engine.ts`), which the outbox's
 * pg-boss worker runs too: BullMQ's stall counter is the routine's interruptions, `job.updateData` keeps
 * what the routine saves, and BullMQ's `RateLimitError` / `UnrecoverableError` are its two signals.
 */
export function processEmailJob(job: Job<EmailJobData>, deps: EmailJobProcessorDeps): Promise<EmailLog> {
  return runEmailJob(
    {
      queueName: job.queueName,
      jobId: String(job.id),
      data: job.data,
      attemptsMade: job.attemptsMade,
      maxAttempts: job.opts.attempts ?? 1,
      interruptions: job.stalledCounter ?? 0,
    },
    {
      send: (input, options) => deps.email.send(input, options),
      maxInterruptions: deps.maxStalledCount,
      rateLimit: deps.rateLimit,
      ...(deps.onRateLimited ? { onRateLimited: deps.onRateLimited } : {}),
      save: (data) => job.updateData(data),
      rateLimitedError: () => new deps.bull.RateLimitError(),
      finalError: (message) => new deps.bull.UnrecoverableError(message),
    },
  );
}

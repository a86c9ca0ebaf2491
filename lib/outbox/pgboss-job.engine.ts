import { runEmailJob } from '../jobs/email-job.engine.js';
import type { EmailJobData } from '../jobs/email-job.interface.js';
import { rebuildJobError, type StoredJobError } from '../jobs/job-error.parser.js';
import type { EmailLog } from '../interfaces/email-records.interface.js';
import type { EmailService } from '../service/email.service.js';
import type { EmailOutboxEvents, OutboxJobData } from './email-outbox.interface.js';

/**
 * What a pg-boss job's `output` holds: on completion, how the email ended (`emailOutcome`); after a failed
 * attempt, the error pg-boss serialized, with our marks (`emailAttempt`, `uncertain`, `lastError`). An output
 * without `emailAttempt` after an attempt began means the attempt was cut off (worker killed, timed out, or
 * pg-boss stopped under it).
 */
export interface OutboxJobOutput {
  emailAttempt?: boolean;
  emailOutcome?: 'sent' | 'failed';
  record?: unknown;
  uncertain?: boolean;
  error?: StoredJobError;
  lastError?: StoredJobError;
  message?: string;
}

/** A job as pg-boss's worker hands it over (with metadata). */
interface WorkerJob {
  id: string;
  data: OutboxJobData;
  retryCount: number;
  output?: OutboxJobOutput | null;
}

/** What the pg-boss worker needs besides the job. */
export interface OutboxJobDeps {
  queueName: string;
  attempts: number;
  email: EmailService;
  /** True once the app is closing: a 429 then gives the job back instead of waiting. */
  closing: () => boolean;
  /** This process's pause after a 429 (pg-boss has no queue-wide pause: each process pauses itself). */
  pause: { until: () => number; set: (ms: number) => void };
  emit: <E extends keyof EmailOutboxEvents>(event: E, payload: Parameters<EmailOutboxEvents[E]>[0]) => void;
}

class RateLimitedSignal extends Error {}
class FinalSignal extends Error {}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A pg-boss job through the one job-attempt routine (`lib/jobs/email-job.engine.ts`), which the queue's
 * BullMQ worker runs too. pg-boss has no "update the job's data" and no "fail without retry", so:
 * - what the routine saves travels in the thrown error, which pg-boss keeps as the job's `output` and hands
 *   to the next attempt; an attempt that began and left no such output was cut off (interrupted);
 * - an attempt that must not be repeated completes the job with `{ emailOutcome: 'failed' }`, which
 *   `EmailOutbox.status` and `waitFor` report as failed;
 * - a 429 pauses this process's workers for its Retry-After (capped) and tries again, not counted as an attempt.
 */
export async function runOutboxJob(job: WorkerJob, deps: OutboxJobDeps): Promise<OutboxJobOutput> {
  const prev = job.retryCount > 0 ? (job.output ?? undefined) : undefined;
  const interrupted = job.retryCount > 0 && prev?.emailAttempt !== true;
  const data: EmailJobData = {
    ...job.data,
    ...(prev?.uncertain || interrupted ? { uncertain: true } : {}),
    ...(prev?.lastError ? { lastError: prev.lastError } : {}),
  };
  const { jobId, idempotencyKey } = job.data;
  for (;;) {
    const wait = deps.pause.until() - Date.now();
    if (wait > 0) await sleep(wait);
    let saved: EmailJobData | undefined;
    try {
      const record: EmailLog = await runEmailJob(
        {
          queueName: deps.queueName,
          jobId,
          data,
          attemptsMade: job.retryCount,
          maxAttempts: deps.attempts,
          interruptions: interrupted ? 1 : 0,
        },
        {
          send: (input, options) => deps.email.send(input, options),
          // pg-boss's retryLimit bounds every kind of attempt, cut off ones included.
          maxInterruptions: Number.MAX_SAFE_INTEGER,
          rateLimit: async (ms) => deps.pause.set(ms),
          onRateLimited: (id, retryAfterMs) => deps.emit('rateLimited', { jobId: id, retryAfterMs }),
          save: async (d) => {
            saved = d;
          },
          rateLimitedError: () => new RateLimitedSignal('rate limited'),
          finalError: (message) => new FinalSignal(message),
        },
      );
      deps.emit('sent', { jobId, idempotencyKey, record });
      return { emailOutcome: 'sent', record: JSON.parse(JSON.stringify(record)) as unknown };
    } catch (err) {
      if (err instanceof RateLimitedSignal) {
        if (deps.closing())
          throw Object.assign(new Error('rate limited while closing'), {
            emailAttempt: true,
            ...marks(data),
          });
        continue;
      }
      const stored = saved?.lastError;
      const uncertain = saved?.uncertain === true;
      const error = stored ? rebuildJobError(stored) : (err as Error);
      if (err instanceof FinalSignal) {
        deps.emit('failed', { jobId, idempotencyKey, error, final: true });
        return {
          emailOutcome: 'failed',
          emailAttempt: true,
          uncertain,
          ...(stored ? { error: stored } : {}),
        };
      }
      const final = job.retryCount + 1 >= deps.attempts;
      deps.emit('failed', { jobId, idempotencyKey, error, final });
      // pg-boss keeps this error (serialized, own fields included) as the job's output for the next attempt.
      throw Object.assign(new Error(error.message), {
        emailAttempt: true,
        uncertain,
        ...(stored ? { lastError: stored } : {}),
      });
    }
  }
}

function marks(data: EmailJobData): Pick<OutboxJobOutput, 'uncertain' | 'lastError'> {
  return { uncertain: data.uncertain === true, ...(data.lastError ? { lastError: data.lastError } : {}) };
}

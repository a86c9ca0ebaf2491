import { runInEmailJobSpan, runInEmailTraceContext } from '../telemetry/trace-context.helpers.js';
import type { Job } from 'bullmq';
import { EmailError } from '../errors/email.error.js';
import {
  EmailAuthenticationError,
  EmailBadRequestError,
  EmailForbiddenError,
  EmailRateLimitError,
} from '../errors/email-api.error.js';
import { EmailSendUncertainError } from '../errors/email-send-uncertain.error.js';
import { EmailValidationError } from '../errors/email-validation.error.js';
import type { EmailLog } from '../interfaces/email-records.interface.js';
import type { EmailService } from '../service/email.service.js';
import type { BullMq } from './bullmq.loader.js';
import type { EmailJobData } from './email-queue.interface.js';
import { storeJobError } from './job-error.codec.js';

/** What the processor needs besides the job. */
export interface EmailJobProcessorDeps {
  bull: BullMq;
  email: EmailService;
  /** Pauses the whole queue (every process) for this long. */
  rateLimit: (ms: number) => Promise<void>;
  onRateLimited?: (jobId: string, ms: number) => void;
}

/** Errors after which no attempt can succeed: the job ends at once. */
function isFinal(err: unknown): boolean {
  return (
    err instanceof EmailValidationError ||
    err instanceof EmailBadRequestError ||
    err instanceof EmailAuthenticationError ||
    err instanceof EmailForbiddenError ||
    // larger than the whole rateLimit budget: no wait can make it fit
    (err instanceof EmailRateLimitError && err.budget !== undefined && !err.retryable)
  );
}

/** True when the service may have accepted the send despite the error. */
function mayHaveBeenAccepted(err: unknown): boolean {
  return !(err instanceof EmailError) || err.outcome !== 'not-sent';
}

/**
 * Runs one attempt of an email job: the same input with the job's key every time, so an attempt that
 * follows one that may have been accepted (an uncertain error, or a job taken over after its worker
 * died) gets the service's replay of its own record, never another job's look-alike. The service is
 * called with its own retries and look-ups off: the queue retries.
 */
export function processEmailJob(job: Job<EmailJobData>, deps: EmailJobProcessorDeps): Promise<EmailLog> {
  // The attempt continues the trace of the request that queued the job, in an `email.job` span.
  return runInEmailTraceContext(job.data.trace, () =>
    runInEmailJobSpan(
      {
        queueName: job.queueName,
        jobId: String(job.id),
        attempt: job.attemptsMade + 1,
        idempotencyKey: job.data.idempotencyKey,
      },
      jobOutcomeOf,
      () => attemptEmailJob(job, deps),
    ),
  );
}

/** What a failed attempt means, as the job span reports it. */
function jobOutcomeOf(err: unknown): string {
  if (err instanceof EmailSendUncertainError || mayHaveBeenAccepted(err)) return 'uncertain';
  if (err instanceof EmailRateLimitError) return 'rate-limited';
  return 'failed';
}

async function attemptEmailJob(job: Job<EmailJobData>, deps: EmailJobProcessorDeps): Promise<EmailLog> {
  const { input, idempotencyKey } = job.data;
  try {
    // Never a looked-up record: another worker may have sent the same content. The key's replay
    // returns this job's own record if an earlier attempt was accepted.
    return await deps.email.send(input, { idempotencyKey, maxRetries: 0, reconcile: false });
  } catch (err) {
    if (err instanceof EmailRateLimitError && !isFinal(err)) {
      const ms = Math.max(err.retryAfterMs ?? 1000, 1);
      await deps.rateLimit(ms);
      deps.onRateLimited?.(String(job.id), ms);
      throw new deps.bull.RateLimitError();
    }
    const uncertain = job.data.uncertain === true || mayHaveBeenAccepted(err);
    const last = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    let final: unknown = err;
    if (uncertain && last && !isFinal(err)) {
      final = new EmailSendUncertainError({ idempotencyKey, attempts: job.attemptsMade + 1, cause: err });
    }
    await job.updateData({ ...job.data, uncertain, lastError: storeJobError(final) });
    if (isFinal(err)) throw new deps.bull.UnrecoverableError((err as Error).message);
    throw final instanceof Error ? final : new Error(String(final));
  }
}

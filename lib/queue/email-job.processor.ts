import { runInEmailJobSpan, runInEmailTraceContext } from '../telemetry/trace-context.helpers.js';
import type { Job } from 'bullmq';
import { EmailError } from '../errors/email.error.js';
import { EmailApiError, EmailRateLimitError } from '../errors/email-api.error.js';
import { JOB_FINAL_STATUSES, jobFailurePlan, retryAfterPauseMs } from '../policy/delivery.policy.js';
import { EmailSendUncertainError } from '../errors/email-send-uncertain.error.js';
import { EmailValidationError } from '../errors/email-validation.error.js';
import type { EmailLog } from '../interfaces/email-records.interface.js';
import type { EmailService } from '../service/email.service.js';
import type { BullMq } from '../peers/optional-peer.loader.js';
import type { EmailJobData } from './email-queue.interface.js';
import { storeJobError } from './job-error.parser.js';

/** What the processor needs besides the job. */
export interface EmailJobProcessorDeps {
  bull: BullMq;
  email: EmailService;
  /** Pauses the whole queue (every process) for this long. */
  rateLimit: (ms: number) => Promise<void>;
  onRateLimited?: (jobId: string, ms: number) => void;
  /** Worker deaths a job survives; past it the job fails uncertain. */
  maxStalledCount: number;
}

/** Errors after which no attempt can succeed (the table's `JOB_FINAL_STATUSES`): the job ends at once. */
function isFinal(err: unknown): boolean {
  return (
    err instanceof EmailValidationError ||
    (err instanceof EmailApiError && JOB_FINAL_STATUSES.has(err.status)) ||
    // larger than the whole rateLimit budget: no wait can make it fit
    (err instanceof EmailRateLimitError && err.budget !== undefined && !err.retryable)
  );
}

/** True when the service may have accepted the send despite the error. */
function mayHaveBeenAccepted(err: unknown): boolean {
  return !(err instanceof EmailError) || err.outcome !== 'not-sent';
}

/** How long a 429 pauses the queue: its Retry-After, capped by the table as the rate limiter caps it. */
export function rateLimitPauseMs(err: EmailRateLimitError): number {
  return retryAfterPauseMs(err.retryAfterMs);
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
  if (err instanceof EmailRateLimitError) return 'rate-limited';
  if (err instanceof EmailSendUncertainError || mayHaveBeenAccepted(err)) return 'uncertain';
  return 'failed';
}

async function attemptEmailJob(job: Job<EmailJobData>, deps: EmailJobProcessorDeps): Promise<EmailLog> {
  const { input, idempotencyKey } = job.data;
  // A worker died during an earlier attempt (BullMQ counts stalls; a 429 requeue is not one).
  const stalls = job.stalledCounter ?? 0;
  const uncertainBefore = job.data.uncertain === true || stalls > 0;
  if (stalls > deps.maxStalledCount) {
    const cause = new EmailError(`the job's worker died ${stalls} time(s) during an attempt`);
    await failFinally(job, deps, new EmailSendUncertainError({ idempotencyKey, attempts: stalls, cause }));
  }
  try {
    // Never a looked-up record: another worker may have sent the same content. The key's replay
    // returns this job's own record if an earlier attempt was accepted.
    return await deps.email.send(input, { idempotencyKey, maxRetries: 0, reconcile: false });
  } catch (err) {
    const attempts = job.attemptsMade + 1;
    const plan = jobFailurePlan(
      {
        rateLimited: err instanceof EmailRateLimitError,
        final: isFinal(err),
        mayHaveBeenAccepted: mayHaveBeenAccepted(err),
      },
      { uncertainBefore, last: attempts >= (job.opts.attempts ?? 1) },
    );
    if (plan.next === 'pause') {
      const ms = rateLimitPauseMs(err as EmailRateLimitError);
      await deps.rateLimit(ms);
      deps.onRateLimited?.(String(job.id), ms);
      throw new deps.bull.RateLimitError();
    }
    const { uncertain } = plan;
    const final = plan.asUncertain
      ? new EmailSendUncertainError({ idempotencyKey, attempts, cause: err })
      : err;
    // No attempt could succeed; after one that may have been accepted, the email may exist all the same.
    if (plan.next === 'fail') await failFinally(job, deps, final);
    await job.updateData({ ...job.data, uncertain, lastError: storeJobError(final) });
    throw final instanceof Error ? final : new Error(String(final));
  }
}

/** Keeps `error` as the job's final error and ends the job without further attempts. */
async function failFinally(
  job: Job<EmailJobData>,
  deps: EmailJobProcessorDeps,
  error: unknown,
): Promise<never> {
  const uncertain = error instanceof EmailSendUncertainError || job.data.uncertain === true;
  await job.updateData({ ...job.data, uncertain, lastError: storeJobError(error) });
  throw new deps.bull.UnrecoverableError((error as Error).message);
}

import { runInEmailJobSpan, runInEmailTraceContext } from '../telemetry/trace-context.helpers.js';
import { EmailError } from '../errors/email.error.js';
import { EmailApiError, EmailRateLimitError } from '../errors/email-api.error.js';
import { JOB_FINAL_STATUSES, jobFailurePlan, retryAfterPauseMs } from '../policy/delivery.policy.js';
import { EmailSendUncertainError } from '../errors/email-send-uncertain.error.js';
import { EmailValidationError } from '../errors/email-validation.error.js';
import type { EmailLog } from '../interfaces/email-records.interface.js';
import type { EmailJobAttempt, EmailJobEngineHooks } from './email-job.interface.js';
import { storeJobError } from './job-error.parser.js';

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

/** How long a 429 pauses sending: its Retry-After, capped by the table as the rate limiter caps it. */
export function rateLimitPauseMs(err: EmailRateLimitError): number {
  return retryAfterPauseMs(err.retryAfterMs);
}

/**
 * Runs one attempt of an email job, whatever engine holds the job (BullMQ for `./queue`, pg-boss for
 * `./outbox`): the same input with the job's key every time, so an attempt that follows one that may have
 * been accepted (an uncertain error, or a job taken over after its worker died) gets the service's replay
 * of its own record, never another job's look-alike. The service is called with its own retries and
 * look-ups off: the engine retries.
 */
export function runEmailJob(attempt: EmailJobAttempt, hooks: EmailJobEngineHooks): Promise<EmailLog> {
  // The attempt continues the trace of the request that queued the job, in an `email.job` span.
  return runInEmailTraceContext(attempt.data.trace, () =>
    runInEmailJobSpan(
      {
        queueName: attempt.queueName,
        jobId: attempt.jobId,
        attempt: attempt.attemptsMade + 1,
        idempotencyKey: attempt.data.idempotencyKey,
      },
      jobOutcomeOf,
      () => attemptEmailJob(attempt, hooks),
    ),
  );
}

/** What a failed attempt means, as the job span reports it. */
function jobOutcomeOf(err: unknown): string {
  if (err instanceof EmailRateLimitError) return 'rate-limited';
  if (err instanceof EmailSendUncertainError || mayHaveBeenAccepted(err)) return 'uncertain';
  return 'failed';
}

async function attemptEmailJob(attempt: EmailJobAttempt, hooks: EmailJobEngineHooks): Promise<EmailLog> {
  const { data } = attempt;
  const { input, idempotencyKey } = data;
  // A worker died during an earlier attempt (the engine counts those; a 429 requeue is not one).
  const stalls = attempt.interruptions;
  const uncertainBefore = data.uncertain === true || stalls > 0;
  if (stalls > hooks.maxInterruptions) {
    const cause = new EmailError(`the job's worker died ${stalls} time(s) during an attempt`);
    await failFinally(
      attempt,
      hooks,
      new EmailSendUncertainError({ idempotencyKey, attempts: stalls, cause }),
    );
  }
  try {
    // Never a looked-up record: another worker may have sent the same content. The key's replay
    // returns this job's own record if an earlier attempt was accepted.
    return await hooks.send(input, { idempotencyKey, maxRetries: 0, reconcile: false });
  } catch (err) {
    const attempts = attempt.attemptsMade + 1;
    const plan = jobFailurePlan(
      {
        rateLimited: err instanceof EmailRateLimitError,
        final: isFinal(err),
        mayHaveBeenAccepted: mayHaveBeenAccepted(err),
      },
      { uncertainBefore, last: attempts >= attempt.maxAttempts },
    );
    if (plan.next === 'pause') {
      const ms = rateLimitPauseMs(err as EmailRateLimitError);
      await hooks.rateLimit(ms);
      hooks.onRateLimited?.(attempt.jobId, ms);
      throw hooks.rateLimitedError();
    }
    const { uncertain } = plan;
    const final = plan.asUncertain
      ? new EmailSendUncertainError({ idempotencyKey, attempts, cause: err })
      : err;
    // No attempt could succeed; after one that may have been accepted, the email may exist all the same.
    if (plan.next === 'fail') await failFinally(attempt, hooks, final);
    await hooks.save({ ...data, uncertain, lastError: storeJobError(final) });
    throw final instanceof Error ? final : new Error(String(final));
  }
}

/** Keeps `error` as the job's final error and ends the job without further attempts. */
async function failFinally(
  attempt: EmailJobAttempt,
  hooks: EmailJobEngineHooks,
  error: unknown,
): Promise<never> {
  const uncertain = error instanceof EmailSendUncertainError || attempt.data.uncertain === true;
  await hooks.save({ ...attempt.data, uncertain, lastError: storeJobError(error) });
  throw hooks.finalError((error as Error).message);
}

import { JOB_FINAL_STATUSES, type FailureFacts } from '../policy/job.policy.js';
import { EmailApiError, EmailRateLimitError } from './email-api.error.js';
import { EmailValidationError } from './email-validation.error.js';
import { EmailAccountError } from './email-account.error.js';
import { EmailError } from './email.error.js';
import { EmailSuppressedError } from './email-suppressed.error.js';

/**
 * Any thrown value as the decision table reads it (`policy/job.policy.ts`). Every caller that decides on
 * a failure (a job attempt, `sendMany`'s batches) reads it through here, so that the same failure gets the
 * same answer everywhere.
 */
export function failureFacts(err: unknown): FailureFacts {
  const ours = err instanceof EmailError;
  const rateLimit = err instanceof EmailRateLimitError ? err : undefined;
  return {
    ours,
    ...(ours && err.outcome !== undefined ? { outcome: err.outcome } : {}),
    // a 429, or our own rateLimit budget without room before the call's deadline: a wait cures both
    rateLimited: rateLimit !== undefined,
    ...(rateLimit?.retryAfterMs !== undefined ? { retryAfterMs: rateLimit.retryAfterMs } : {}),
    ...(rateLimit?.budget !== undefined && rateLimit.budget !== 'paused' ? { budgetFull: true } : {}),
    final:
      err instanceof EmailValidationError ||
      // recipients on the suppression list: refused the same way until the app removes them
      err instanceof EmailSuppressedError ||
      // an account the resolver does not know (or answers wrongly): only its failure may pass
      (err instanceof EmailAccountError && err.problem !== 'resolver-failed') ||
      (err instanceof EmailApiError && JOB_FINAL_STATUSES.has(err.status)) ||
      // larger than the whole rateLimit budget: no wait can make it fit
      (rateLimit !== undefined && rateLimit.budget !== undefined && !rateLimit.retryable),
  };
}

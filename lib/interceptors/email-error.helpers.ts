import type { HttpException } from '@nestjs/common';
import {
  EmailApiError,
  EmailAuthenticationError,
  EmailForbiddenError,
  EmailRateLimitError,
} from '../errors/email-api.error.js';
import { EmailBatchUncertainError } from '../errors/email-batch-uncertain.error.js';
import { EmailOptionsError } from '../errors/email-options.error.js';
import { EmailQueueUnavailableError } from '../errors/email-queue.error.js';
import { EmailOutboxUnavailableError } from '../errors/email-outbox.error.js';
import { EmailJobCancelledError, EmailJobConflictError } from '../errors/email-job.error.js';
import { EmailAccountError } from '../errors/email-account.error.js';
import { EmailSendUncertainError } from '../errors/email-send-uncertain.error.js';
import { EmailSuppressedError } from '../errors/email-suppressed.error.js';
import {
  EmailAbortError,
  EmailConnectionError,
  EmailTimeoutError,
  EmailUnexpectedResponseError,
} from '../errors/email-transport.error.js';
import { EmailValidationError } from '../errors/email-validation.error.js';
import { EmailError } from '../errors/email.error.js';
import { EMAIL_HTTP_MESSAGES as M, HTTP_REASON } from './email-error.constants.js';
import { EmailHttpException } from '../errors/email-http.error.js';

/** Statuses of the service mapped to the answer's status and text (401 and 403 have their own rows). */
const BY_API_STATUS: Readonly<Record<number, [number, string]>> = {
  400: [400, M.badRequest],
  404: [404, M.notFound],
  409: [409, M.conflict],
  500: [502, M.serverFailure],
  502: [502, M.serverFailure],
  503: [503, M.unavailable],
};

function answer(
  error: EmailError,
  status: number,
  message: string,
  extra: Record<string, unknown> = {},
  headers?: Record<string, string>,
): EmailHttpException {
  const body: Record<string, unknown> = { statusCode: status, message, error: HTTP_REASON[status] };
  if (error.outcome !== undefined) body.outcome = error.outcome;
  return new EmailHttpException({ ...body, ...extra }, status, { headers, cause: error });
}

/**
 * `Retry-After` in whole seconds, rounded up and at least 1; undefined when the service did not say.
 * @example retryAfterSeconds(err) // 3 for retryAfterMs 2500
 */
export function retryAfterSeconds(error: EmailRateLimitError): number | undefined {
  const ms = error.retryAfterMs;
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) return undefined;
  return Math.max(1, Math.ceil(ms / 1000));
}

function rateLimited(error: EmailRateLimitError): EmailHttpException {
  const seconds = retryAfterSeconds(error);
  if (seconds === undefined) return answer(error, 429, M.rateLimited);
  return answer(
    error,
    429,
    M.rateLimited,
    { retryAfterSeconds: seconds },
    { 'Retry-After': String(seconds) },
  );
}

/**
 * An account the module cannot send for. Most apps take the account id from the request (`/tenants/:id/...`):
 * an id no account has (unknown, or one that breaks the id's rule) is the client's mistake, 404 as any
 * unknown resource of a route; a resolver that failed is 503 (try again); an account that cannot be used
 * (the resolver's answer is wrong) or a call without one is the app's own fault, 500. No answer names the
 * account id (ids may be customer data) or the problem beyond its status.
 */
function accountAnswer(error: EmailAccountError): EmailHttpException {
  switch (error.problem) {
    case 'unknown':
    case 'invalid-id':
      return answer(error, 404, M.accountNotFound);
    case 'resolver-failed':
      return answer(error, 503, M.accountUnavailable);
    default:
      return answer(error, 500, M.accountUnusable);
  }
}

/**
 * The default answer for an error of this package (the table in docs/errors.md), or `undefined` for
 * errors to pass through untouched: errors that are not ours, and `EmailOptionsError` (a mistake in
 * the module's setup, which Nest answers 500 and logs). Answers never carry the API key, the service's
 * own error text or details of the request to the service.
 *
 * @example
 * // in a custom mapping: change one row, keep the others
 * map: (err) => (err instanceof EmailNotFoundError ? new GoneException() : emailErrorToHttpException(err))
 */
export function emailErrorToHttpException(error: unknown): HttpException | undefined {
  if (!(error instanceof EmailError) || error instanceof EmailOptionsError) return undefined;
  if (error instanceof EmailValidationError) {
    const issues = error.issues.map(({ path, message }) => ({ path, message }));
    return answer(error, 400, error.message, { issues });
  }
  if (error instanceof EmailSendUncertainError) {
    return answer(error, 502, M.sendUncertain, {
      outcome: 'uncertain',
      idempotencyKey: error.idempotencyKey,
    });
  }
  if (error instanceof EmailBatchUncertainError) {
    return answer(error, 502, M.batchUncertain, { outcome: 'uncertain' });
  }
  if (error instanceof EmailQueueUnavailableError) {
    return answer(error, 503, M.queueUnavailable, { jobId: error.jobId, mayLand: error.mayLand });
  }
  if (error instanceof EmailOutboxUnavailableError) {
    return answer(error, 503, M.outboxUnavailable, { jobIds: error.jobIds, mayLand: error.mayLand });
  }
  // 422: the request is well formed and will be refused the same way until the list changes (a 4xx a
  // client does not retry). Counted, never named: which addresses bounced or complained is not the
  // client's to learn (the error's `addresses` are the app's).
  if (error instanceof EmailSuppressedError)
    return answer(error, 422, M.suppressed, { suppressed: error.addresses.length });
  if (error instanceof EmailJobConflictError)
    return answer(error, 409, M.jobConflict, { jobId: error.jobId });
  if (error instanceof EmailJobCancelledError)
    return answer(error, 409, M.jobCancelled, { jobId: error.jobId });
  if (error instanceof EmailAccountError) return accountAnswer(error);
  if (error instanceof EmailAuthenticationError) return answer(error, 502, M.credentials);
  if (error instanceof EmailForbiddenError) return answer(error, 502, M.forbidden);
  if (error instanceof EmailRateLimitError) return rateLimited(error);
  if (error instanceof EmailApiError) {
    const [status, message] = BY_API_STATUS[error.status] ?? [502, M.unexpected];
    return answer(error, status, message);
  }
  if (error instanceof EmailTimeoutError) return answer(error, 504, M.timeout);
  if (error instanceof EmailConnectionError) return answer(error, 503, M.unreachable);
  if (error instanceof EmailAbortError) return answer(error, 503, M.aborted);
  if (error instanceof EmailUnexpectedResponseError) return answer(error, 502, M.unexpected);
  return answer(error, 502, M.failed);
}

import { EmailApiError, EmailAuthenticationError, EmailForbiddenError } from '../errors/email-api.error.js';
import {
  EmailAbortError,
  EmailConnectionError,
  EmailTimeoutError,
  EmailUnexpectedResponseError,
} from '../errors/email-transport.error.js';
import type { EmailHealthDown } from './email-health.interface.js';

/** Reason and explanation of a failed check; never includes the API key or the service's own texts. */
export type EmailHealthFailure = Pick<EmailHealthDown, 'reason' | 'message' | 'statusCode'>;

/** Classifies the error of the health check's read (its deadline is the service's own `timeoutMs`). */
export function healthFailureOf(err: unknown, timeoutMs: number): EmailHealthFailure {
  if (err instanceof EmailTimeoutError || err instanceof EmailAbortError) {
    return { reason: 'timeout', message: `the email service did not answer within ${timeoutMs} ms` };
  }
  if (err instanceof EmailAuthenticationError) {
    return { reason: 'unauthorized', message: 'the email service refused the API key', statusCode: 401 };
  }
  if (err instanceof EmailForbiddenError) {
    return { reason: 'forbidden', message: 'the API key may not list emails', statusCode: 403 };
  }
  if (err instanceof EmailApiError) {
    return {
      reason: 'unavailable',
      message: `the email service answered with status ${err.status}`,
      statusCode: err.status,
    };
  }
  if (err instanceof EmailUnexpectedResponseError) {
    return {
      reason: 'unavailable',
      message: `the email service gave an answer that breaks its contract (status ${err.status})`,
      statusCode: err.status,
    };
  }
  if (err instanceof EmailConnectionError) {
    const code = err.code === undefined ? '' : ` (${err.code})`;
    return { reason: 'unreachable', message: `the email service could not be reached${code}` };
  }
  const name = err instanceof Error ? err.name : typeof err;
  return { reason: 'error', message: `the health check failed unexpectedly (${name})` };
}

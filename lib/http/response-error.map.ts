import { isRetryable, outcomeOf, parseRetryAfter, statusEvidence } from '../policy/delivery.policy.js';
import type { Redactor } from './secret-redaction.util.js';
import type { TransportResponse } from './transport.interface.js';
import {
  EmailApiError,
  EmailAuthenticationError,
  EmailBadRequestError,
  EmailConflictError,
  EmailForbiddenError,
  EmailNotFoundError,
  EmailProviderError,
  EmailRateLimitError,
  EmailServerError,
  EmailUnavailableError,
  type EmailApiErrorInit,
} from '../errors/email-api.error.js';

const BY_STATUS: Record<number, new (init: EmailApiErrorInit) => EmailApiError> = {
  400: EmailBadRequestError,
  401: EmailAuthenticationError,
  403: EmailForbiddenError,
  404: EmailNotFoundError,
  409: EmailConflictError,
  500: EmailServerError,
  502: EmailProviderError,
  503: EmailUnavailableError,
};

const MAX_API_MESSAGE = 500;

/** Takes the whole `error` text out of a body of the form `{error: string}`; anything else gives undefined. */
export function apiMessageOf(text: string): string | undefined {
  const first = text.trimStart()[0];
  if (first !== '{') return undefined;
  try {
    const body = JSON.parse(text) as { error?: unknown };
    if (typeof body?.error !== 'string' || body.error === '') return undefined;
    return body.error; // whole: redacted before it is cut (see errorFromResponse)
  } catch {
    return undefined;
  }
}

/**
 * Builds the typed error for a non-2xx response. `redact` removes the API key from any text the
 * server sent back. Whether it retries and its `outcome` come from the table (`policy/delivery.policy.ts`).
 */
export function errorFromResponse(
  res: TransportResponse,
  ctx: { method: string; path: string; createsMessage: boolean; redact: Redactor },
): EmailApiError {
  const { status } = res;
  const raw = apiMessageOf(res.text);
  const apiMessage = raw === undefined ? undefined : ctx.redact(raw, MAX_API_MESSAGE);
  const init: EmailApiErrorInit = {
    status,
    method: ctx.method,
    path: ctx.path,
    apiMessage,
    retryable: isRetryable('status', status),
    outcome: outcomeOf(ctx.createsMessage, statusEvidence(status)),
  };
  if (status === 429) {
    return new EmailRateLimitError({ ...init, retryAfterMs: parseRetryAfter(res.headers['retry-after']) });
  }
  const Ctor = BY_STATUS[status] ?? EmailApiError;
  return new Ctor(init);
}

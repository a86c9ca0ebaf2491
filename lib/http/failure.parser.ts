/**
 * A failed exchange as our typed error: an error answer (`errorFromResponse`) or a failure of undici or
 * of reading the body (`mapTransportError`). Whether it retries and its `outcome` come from the decision
 * table (`policy/delivery.policy.ts`); this file only reads the untrusted answer and picks the class.
 */
import {
  isRetryable,
  outcomeOf,
  parseRetryAfter,
  RETRY_AFTER_CAP_MS,
  statusEvidence,
  transportEvidence,
} from '../policy/delivery.policy.js';
import { EmailAbortError, EmailConnectionError, EmailTimeoutError } from '../errors/email-transport.error.js';
import type { EmailError } from '../errors/email.error.js';
import type { Redactor } from './secret-redaction.helpers.js';
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
    // The error says the wait the module applies (at most the cap); a longer ask is kept beside it.
    const requested = parseRetryAfter(res.headers['retry-after']);
    const capped = requested === undefined ? undefined : Math.min(requested, RETRY_AFTER_CAP_MS);
    return new EmailRateLimitError({
      ...init,
      retryAfterMs: capped,
      requestedRetryAfterMs: requested !== capped ? requested : undefined,
    });
  }
  const Ctor = BY_STATUS[status] ?? EmailApiError;
  return new Ctor(init);
}

/** Why an in-flight exchange ended early, as the transport knows it. */
export type EndReason = 'deadline' | 'caller' | undefined;

function codeOf(err: unknown): string | undefined {
  let current: unknown = err;
  for (let depth = 0; current && depth < 4; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'UND_ERR_ABORTED' && code !== 'ABORT_ERR') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * Turns a failure of undici (or of reading the body) into one of our errors. For a call that may
 * create a message, `outcome` says whether the request can have reached the service (`outcomeOf`).
 */
export function mapTransportError(
  err: unknown,
  ctx: {
    method: string;
    path: string;
    createsMessage: boolean;
    timeoutMs: number;
    connectTimeoutMs: number;
    ended: EndReason;
  },
): EmailError {
  const base = { method: ctx.method, path: ctx.path, cause: err };
  if (ctx.ended !== undefined) {
    // stopped in flight: the request may already be with the service
    const outcome = outcomeOf(ctx.createsMessage, transportEvidence(undefined, true));
    if (ctx.ended === 'caller') return new EmailAbortError({ ...base, outcome });
    return new EmailTimeoutError({ ...base, timeoutMs: ctx.timeoutMs, outcome });
  }
  const code = codeOf(err);
  const outcome = outcomeOf(ctx.createsMessage, transportEvidence(code, false));
  if (code === 'UND_ERR_CONNECT_TIMEOUT') {
    return new EmailTimeoutError({ ...base, timeoutMs: ctx.connectTimeoutMs, outcome });
  }
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return new EmailTimeoutError({ ...base, timeoutMs: ctx.timeoutMs, outcome });
  }
  const reason = code
    ? `${code}${(err as Error)?.message ? ` (${(err as Error).message})` : ''}`
    : String(err);
  return new EmailConnectionError({ ...base, code, reason, outcome });
}

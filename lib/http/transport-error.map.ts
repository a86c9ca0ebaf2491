import { outcomeOf, transportEvidence } from '../policy/delivery.policy.js';
import { EmailAbortError, EmailConnectionError, EmailTimeoutError } from '../errors/email-transport.error.js';
import type { EmailError } from '../errors/email.error.js';

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

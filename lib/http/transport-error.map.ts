import { EmailAbortError, EmailConnectionError, EmailTimeoutError } from '../errors/email-transport.error.js';
import type { EmailError } from '../errors/email.error.js';

/** Codes that prove the request never reached the service: the connection was never made. */
const NOT_CONNECTED = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_CLOSED',
  'UND_ERR_DESTROYED',
  'UND_ERR_INVALID_ARG',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
]);

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
 * Turns a failure of undici (or of reading the body) into one of our errors. For POST (a send),
 * `outcome` says whether the request can have reached the service.
 */
export function mapTransportError(
  err: unknown,
  ctx: { method: string; path: string; timeoutMs: number; connectTimeoutMs: number; ended: EndReason },
): EmailError {
  const send = ctx.method === 'POST';
  const base = { method: ctx.method, path: ctx.path, cause: err };
  if (ctx.ended === 'caller') {
    return new EmailAbortError({ ...base, outcome: send ? 'uncertain' : undefined });
  }
  if (ctx.ended === 'deadline') {
    return new EmailTimeoutError({
      ...base,
      timeoutMs: ctx.timeoutMs,
      outcome: send ? 'uncertain' : undefined,
    });
  }
  const code = codeOf(err);
  const notConnected = code !== undefined && NOT_CONNECTED.has(code);
  const outcome = send ? (notConnected ? 'not-sent' : 'uncertain') : undefined;
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

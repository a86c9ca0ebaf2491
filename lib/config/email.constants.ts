/**
 * Version of this package, sent in the User-Agent (a spec checks it matches package.json).
 */
export const PACKAGE_VERSION = '0.1.0';

/** Name of this package. */
export const PACKAGE_NAME = 'nestjs-transactional-email';

/** Largest response body read into memory, in bytes; a larger one is refused and discarded. */
export const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

/** Keep-alive used when the service does not say: below the 5 s idle timeout common in servers and proxies. */
export const KEEP_ALIVE_TIMEOUT_MS = 4_000;

/** Longest keep-alive accepted from a server's `Keep-Alive` hint. */
export const KEEP_ALIVE_MAX_TIMEOUT_MS = 60_000;

/**
 * Set by `parseEmailEnv` (and so `emailConfig`) on the options it returns when the API key's variable is
 * unset: the variable's name, so that a module given neither a key nor `accounts` names the variable to set.
 * An enumerable symbol, so that it survives the `{ ...config, accounts }` an app's factory writes, and no
 * option name.
 */
export const UNSET_KEY_VARIABLE = Symbol.for('nestjs-transactional-email.unsetKeyVariable');

/** Defaults of the module options. */
export const EMAIL_DEFAULTS = {
  timeoutMs: 30_000,
  connectTimeoutMs: 10_000,
  maxRetries: 2,
  idempotency: 'auto',
  reconcile: true,
  connections: 16,
  allowInsecureHttp: false,
  accountCacheTtlMs: 60_000,
  accountCacheMax: 10_000,
} as const;

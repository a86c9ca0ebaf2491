/**
 * Version of this package, sent in the User-Agent (a spec checks it matches package.json).
 * @publicApi
 */
export const PACKAGE_VERSION = '0.1.0';

/** Name of this package. */
export const PACKAGE_NAME = 'nestjs-transactional-email';

/** Token of the resolved, checked options of one module instance. */
export const EMAIL_RESOLVED_OPTIONS = Symbol('nestjs-transactional-email:resolved-options');

/** Token of the HTTP transport of one module instance. */
export const EMAIL_TRANSPORT = Symbol('nestjs-transactional-email:transport');

/** Token of the one-attempt API client of one module instance. */
export const EMAIL_API_CLIENT = Symbol('nestjs-transactional-email:api-client');

/** Token of the `DeliveryObserver` of one module instance (attempts, reconcile look-ups, outcomes). */
/** Token of a module instance's request loop (`RequestEngine`). */
export const EMAIL_REQUEST_ENGINE = Symbol('nestjs-transactional-email:request-engine');

/** Token of the records a module instance's sends have returned (`ClaimedRecords`). */
export const EMAIL_CLAIMED_RECORDS = Symbol('nestjs-transactional-email:claimed-records');

/** Token of a module instance's open identical sends (`IdenticalSends`). */
export const EMAIL_IDENTICAL_SENDS = Symbol('nestjs-transactional-email:identical-sends');

/** Token of a module instance's `rateLimit` limiter (`SendRateLimiter`), null without the option. */
export const EMAIL_RATE_LIMITER = Symbol('nestjs-transactional-email:rate-limiter');

export const EMAIL_DELIVERY_OBSERVER = Symbol('nestjs-transactional-email:delivery-observer');

/** Largest response body read into memory, in bytes; a larger one is refused and discarded. */
export const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

/** Keep-alive used when the service does not say: below the 5 s idle timeout common in servers and proxies. */
export const KEEP_ALIVE_TIMEOUT_MS = 4_000;

/** Longest keep-alive accepted from a server's `Keep-Alive` hint. */
export const KEEP_ALIVE_MAX_TIMEOUT_MS = 60_000;

/** Defaults of the module options. */
export const EMAIL_DEFAULTS = {
  timeoutMs: 30_000,
  connectTimeoutMs: 10_000,
  maxRetries: 2,
  idempotency: 'auto',
  reconcile: true,
  connections: 16,
  allowInsecureHttp: false,
} as const;

/** The feature named by the errors about `@nestjs/config` (not installed, failed to load). */
export const CONFIG_FEATURE = 'emailConfig';

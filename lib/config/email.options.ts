import { Logger } from '@nestjs/common';
import type {
  EmailModuleOptions,
  ResolvedEmailOptions,
} from '../interfaces/email-module-options.interface.js';
import { EMAIL_DEFAULTS } from './email.constants.js';
import { EmailOptionsError } from '../errors/email-options.error.js';
import { apiKeyOf } from './secret-safe.options.js';
import { resolveRateLimit } from './rate-limit.options.js';

/**
 * The checked options of one `EmailModule` instance, defaults applied, never the API key: a plain
 * `ResolvedEmailOptions` object provided under this class, as Nest registers providers by class.
 * @example constructor(@Inject(EmailResolvedOptions) private readonly options: ResolvedEmailOptions) {}
 */
export abstract class EmailResolvedOptions {}

const KNOWN = new Set([
  'apiKey',
  'baseUrl',
  'timeoutMs',
  'connectTimeoutMs',
  'maxRetries',
  'idempotency',
  'reconcile',
  'defaultFrom',
  'connections',
  'dispatcher',
  'allowInsecureHttp',
  'logger',
  'telemetry',
  'rateLimit',
]);

/** Logged once at boot when `allowInsecureHttp` lets plain http reach a host that is not loopback. */
export const INSECURE_HTTP_WARNING =
  'baseUrl uses plain http to a host that is not loopback (allowInsecureHttp: true): the API key and every ' +
  'email travel unencrypted and can be read or changed on the way; use https outside a trusted network';

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/** Visible ASCII (`!` to `~`): what an API key may hold to travel in an `Authorization` header. */
const HEADER_SAFE_KEY = /^[\x21-\x7e]+$/;

/** True when `key` can travel in an HTTP header as it is (visible ASCII only, no spaces). */
export function isHeaderSafeKey(key: string): boolean {
  return HEADER_SAFE_KEY.test(key);
}

/** True when `hostname` (as `URL#hostname` gives it) is a loopback host. */
export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK.test(hostname);
}

function positive(value: unknown, name: string, problems: string[], integer = false): void {
  if (value === undefined) return;
  const ok = typeof value === 'number' && Number.isFinite(value) && value > 0;
  if (!ok || (integer && !Number.isInteger(value))) {
    problems.push(`${name} must be a positive ${integer ? 'integer' : 'number'} (got ${describe(value)})`);
  }
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? value.slice(0, 40) + '…' : value);
  if (value === null || typeof value !== 'object') return String(value);
  return Array.isArray(value) ? 'an array' : 'an object';
}

function checkBaseUrl(raw: unknown, allowInsecure: boolean, problems: string[]): URL | undefined {
  if (typeof raw !== 'string' || raw.trim() === '') {
    problems.push('baseUrl is required and must be an absolute http(s) URL');
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    problems.push('baseUrl must be an absolute URL (its value is not shown: it may carry secrets)');
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    problems.push('baseUrl must use http: or https:');
  } else if (url.protocol === 'http:' && !allowInsecure && !isLoopbackHost(url.hostname)) {
    problems.push(
      'baseUrl uses plain http to a host that is not loopback, which would send the API key unencrypted; ' +
        'use https, or set allowInsecureHttp: true',
    );
  }
  if (url.username || url.password) problems.push('baseUrl must not carry credentials; use apiKey');
  if (url.search || url.hash) problems.push('baseUrl must not have a query string or fragment');
  return url;
}

/**
 * Checks the options and applies the defaults. Throws one `EmailOptionsError` naming every bad option.
 * The API key is checked but not returned: the transport keeps it out of sight.
 */
export function resolveEmailOptions(options: EmailModuleOptions): ResolvedEmailOptions {
  const problems: string[] = [];
  if (typeof options !== 'object' || options === null) {
    throw new EmailOptionsError(['options must be an object with at least apiKey and baseUrl']);
  }
  for (const key of Object.keys(options)) {
    if (!KNOWN.has(key) && (options as unknown as Record<string, unknown>)[key] !== undefined) {
      problems.push(`unknown option ${JSON.stringify(key)}`);
    }
  }
  const apiKey = apiKeyOf(options);
  if (typeof apiKey !== 'string' || apiKey.trim() === '') {
    problems.push('apiKey is required and must be a non-empty string');
  } else if (/^\s*bearer\s/i.test(apiKey)) {
    // The prefix is ours to add: quoting it reveals nothing of the key.
    problems.push(
      "apiKey must be the key alone, without the 'Bearer ' prefix (the module sends the Authorization: Bearer header itself)",
    );
  } else if (!isHeaderSafeKey(apiKey)) {
    // Quotes nothing of the key: not even which character was refused.
    problems.push(
      'apiKey must not contain whitespace, line breaks, control or non-ASCII characters (visible ASCII only: it travels in an HTTP header)',
    );
  }
  const allowInsecure = options.allowInsecureHttp ?? EMAIL_DEFAULTS.allowInsecureHttp;
  if (typeof allowInsecure !== 'boolean') problems.push('allowInsecureHttp must be a boolean');
  const url = checkBaseUrl(options.baseUrl, allowInsecure === true, problems);
  positive(options.timeoutMs, 'timeoutMs', problems);
  positive(options.connectTimeoutMs, 'connectTimeoutMs', problems);
  positive(options.connections, 'connections', problems, true);
  const { maxRetries } = options;
  if (maxRetries !== undefined && !(Number.isInteger(maxRetries) && maxRetries >= 0)) {
    problems.push(`maxRetries must be an integer of 0 or more (got ${describe(maxRetries)})`);
  }
  if (options.idempotency !== undefined && options.idempotency !== 'auto' && options.idempotency !== 'off') {
    problems.push(`idempotency must be 'auto' or 'off' (got ${describe(options.idempotency)})`);
  }
  if (options.reconcile !== undefined && typeof options.reconcile !== 'boolean') {
    problems.push('reconcile must be a boolean');
  }
  if (options.telemetry !== undefined && typeof options.telemetry !== 'boolean') {
    problems.push('telemetry must be a boolean');
  }
  const { defaultFrom } = options;
  if (defaultFrom !== undefined && (typeof defaultFrom !== 'string' || defaultFrom.trim() === '')) {
    problems.push('defaultFrom must be a non-empty string');
  } else if (typeof defaultFrom === 'string' && /[\r\n]/.test(defaultFrom)) {
    problems.push('defaultFrom must not contain line breaks');
  }
  const { dispatcher, logger } = options;
  if (dispatcher !== undefined && typeof (dispatcher as { request?: unknown })?.request !== 'function') {
    problems.push('dispatcher must be an undici Dispatcher (Agent, Pool, ProxyAgent...)');
  }
  if (logger !== undefined && logger !== false && typeof (logger as { log?: unknown })?.log !== 'function') {
    problems.push('logger must be a Nest LoggerService or false');
  }
  const rateLimit = resolveRateLimit(options.rateLimit, problems);
  if (problems.length > 0 || !url) throw new EmailOptionsError(problems);

  const pathPrefix = url.pathname.replace(/\/+$/, '');
  const log = logger === undefined ? new Logger() : logger; // lines carry the 'EmailModule' context themselves
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    // Allowed on purpose, but never silently: once per module instance, at boot. Even with
    // `logger: false` (which silences delivery lines) this goes to Nest's own Logger.
    (log === false ? new Logger() : log).warn(INSECURE_HTTP_WARNING, 'EmailModule');
  }
  return Object.freeze({
    baseUrl: url,
    origin: url.origin,
    pathPrefix,
    timeoutMs: options.timeoutMs ?? EMAIL_DEFAULTS.timeoutMs,
    connectTimeoutMs: options.connectTimeoutMs ?? EMAIL_DEFAULTS.connectTimeoutMs,
    maxRetries: maxRetries ?? EMAIL_DEFAULTS.maxRetries,
    idempotency: options.idempotency ?? EMAIL_DEFAULTS.idempotency,
    reconcile: options.reconcile ?? EMAIL_DEFAULTS.reconcile,
    defaultFrom,
    connections: options.connections ?? EMAIL_DEFAULTS.connections,
    dispatcher,
    telemetry: options.telemetry ?? true,
    logger: log,
    rateLimit,
  });
}

import { Logger, type LoggerService } from '@nestjs/common';
import type {
  EmailModuleOptions,
  ResolvedEmailOptions,
} from '../interfaces/email-module-options.interface.js';
import { EMAIL_DEFAULTS, UNSET_KEY_VARIABLE } from './email.constants.js';
import { EmailOptionsError } from '../errors/email-options.error.js';
import { apiKeyOf } from './secret-safe.options.js';
import { resolveRateLimit } from './rate-limit.options.js';
import { resolveSuppression } from './suppression.options.js';

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
  'accounts',
  'accountCacheTtlMs',
  'accountCacheMax',
  'suppression',
]);

/**
 * Where the module's lines go: the `logger` option (Nest's own `Logger` by default, `false`: nowhere). Its
 * lines carry the 'EmailModule' context themselves.
 */
export function loggerOf(options: EmailModuleOptions): LoggerService | false {
  return options.logger === undefined ? new Logger() : options.logger;
}

/** Whether spans and metrics are on (`telemetry` is anything but `false`). */
export function telemetryOn(options: EmailModuleOptions): boolean {
  return options.telemetry !== false;
}

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

/**
 * What is wrong with an API key (`name` says whose: `apiKey`, or an account's), or undefined. Quotes
 * nothing of the key: not even which character was refused.
 */
export function apiKeyProblem(key: unknown, name: string): string | undefined {
  if (typeof key !== 'string' || key.trim() === '')
    return `${name} is required and must be a non-empty string`;
  // The prefix is ours to add: quoting it reveals nothing of the key.
  if (/^\s*bearer\s/i.test(key))
    return `${name} must be the key alone, without the 'Bearer ' prefix (the module sends the Authorization: Bearer header itself)`;
  if (!isHeaderSafeKey(key))
    return `${name} must not contain whitespace, line breaks, control or non-ASCII characters (visible ASCII only: it travels in an HTTP header)`;
  return undefined;
}

/** What is wrong with a `defaultFrom` (the module's or an account's), or undefined. */
export function defaultFromProblem(value: unknown, name = 'defaultFrom'): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '') return `${name} must be a non-empty string`;
  if (/[\r\n]/.test(value)) return `${name} must not contain line breaks`;
  return undefined;
}

/** Whether `value` can be the `accounts` option: an object with `resolve`, or a function (a class is one). */
function isAccountsOption(value: unknown): boolean {
  if (typeof value === 'function') return true;
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { resolve?: unknown }).resolve === 'function'
  );
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

export function checkBaseUrl(raw: unknown, allowInsecure: boolean, problems: string[]): URL | undefined {
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
 * The missing key's problem, naming the variable it was to come from when the options came from the
 * environment (`emailConfig`, `parseEmailEnv`), which leaves the key out for a module with `accounts`.
 */
function withoutKey(problem: string, options: EmailModuleOptions): string {
  const variable = (options as unknown as Record<symbol, unknown>)[UNSET_KEY_VARIABLE];
  if (typeof variable !== 'string' || apiKeyOf(options) !== undefined) return problem;
  return `${problem}: set ${variable}, or give the module accounts to send for`;
}

/**
 * Checks the options and applies the defaults. Throws one `EmailOptionsError` naming every bad option.
 * The API key is checked but not returned: the transport keeps it out of sight.
 */
export function resolveEmailOptions(options: EmailModuleOptions): ResolvedEmailOptions {
  const problems: string[] = [];
  if (typeof options !== 'object' || options === null) {
    throw new EmailOptionsError(['options must be an object with at least baseUrl, and apiKey or accounts']);
  }
  for (const key of Object.keys(options)) {
    if (!KNOWN.has(key) && (options as unknown as Record<string, unknown>)[key] !== undefined) {
      problems.push(`unknown option ${JSON.stringify(key)}`);
    }
  }
  const apiKey = apiKeyOf(options);
  const { accounts } = options;
  if (accounts !== undefined && !isAccountsOption(accounts)) {
    problems.push(
      'accounts must be an EmailAccountResolver (an object with resolve(accountId)), a class implementing it, or a function (accountId) => account',
    );
  }
  if (apiKey !== undefined || accounts === undefined) {
    const problem = apiKeyProblem(apiKey, 'apiKey');
    if (problem !== undefined)
      problems.push(
        accounts === undefined
          ? withoutKey(problem, options)
          : `${problem} (or leave it out: accounts is given)`,
      );
  }
  positive(options.accountCacheTtlMs, 'accountCacheTtlMs', problems);
  positive(options.accountCacheMax, 'accountCacheMax', problems, true);
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
  const { telemetry } = options;
  const telemetryObject = typeof telemetry === 'object' && telemetry !== null && !Array.isArray(telemetry);
  if (telemetry !== undefined && typeof telemetry !== 'boolean' && !telemetryObject) {
    problems.push('telemetry must be a boolean or { accountAttribute?: boolean }');
  } else if (telemetryObject) {
    const extra = Object.keys(telemetry).filter((k) => k !== 'accountAttribute');
    if (extra.length > 0) problems.push(`telemetry: unknown option ${JSON.stringify(extra[0])}`);
    const { accountAttribute } = telemetry as { accountAttribute?: unknown };
    if (accountAttribute !== undefined && typeof accountAttribute !== 'boolean')
      problems.push('telemetry.accountAttribute must be a boolean');
  }
  const { defaultFrom } = options;
  const fromProblem = defaultFromProblem(defaultFrom);
  if (fromProblem !== undefined) problems.push(fromProblem);
  const { dispatcher, logger } = options;
  if (dispatcher !== undefined && typeof (dispatcher as { request?: unknown })?.request !== 'function') {
    problems.push('dispatcher must be an undici Dispatcher (Agent, Pool, ProxyAgent...)');
  }
  if (logger !== undefined && logger !== false && typeof (logger as { log?: unknown })?.log !== 'function') {
    problems.push('logger must be a Nest LoggerService or false');
  }
  const rateLimit = resolveRateLimit(options.rateLimit, problems, accounts !== undefined);
  const suppression = resolveSuppression(options.suppression, problems, rateLimit);
  if (problems.length > 0 || !url) throw new EmailOptionsError(problems);

  const pathPrefix = url.pathname.replace(/\/+$/, '');
  const log = loggerOf(options);
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
    telemetry: telemetryOn(options),
    accountAttribute:
      telemetryObject && (telemetry as { accountAttribute?: boolean }).accountAttribute === true,
    logger: log,
    rateLimit,
    suppression,
    hasApiKey: apiKey !== undefined,
    accounts,
    accountCacheTtlMs: options.accountCacheTtlMs ?? EMAIL_DEFAULTS.accountCacheTtlMs,
    accountCacheMax: options.accountCacheMax ?? EMAIL_DEFAULTS.accountCacheMax,
  });
}

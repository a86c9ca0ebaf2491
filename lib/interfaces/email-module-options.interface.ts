import type { LoggerService } from '@nestjs/common';
import type { Dispatcher } from 'undici';
import type { EmailAccountsOption } from './email-account.interface.js';
import type { EmailRateLimitOptions, ResolvedRateLimitOptions } from './rate-limit-options.interface.js';
import type { EmailSuppressionOptions, ResolvedSuppressionOptions } from './suppression.interface.js';

/**
 * Options of `EmailModule.forRoot` / `forRootAsync`.
 *
 * @example
 * EmailModule.forRoot({ apiKey: process.env.EMAIL_API_KEY!, baseUrl: 'https://mail.example.com/api' })
 * @publicApi
 */
export interface EmailModuleOptions {
  /**
   * Private API key, sent as `Authorization: Bearer`. Never logged. Required unless `accounts` is given;
   * with `accounts` it is the default account's (the one a call without `{ account }` sends for).
   */
  apiKey?: string;
  /**
   * Many accounts in one app (see docs/accounts.md): finds each account's key at run time, for every call
   * made with `{ account: id }`. A resolver object, a class (Nest's injector builds it, or finds it among
   * the app's providers) or a function. @default none (one account: `apiKey`)
   */
  accounts?: EmailAccountsOption;
  /**
   * How long a resolved account is kept in memory, in ms: a key rotated in the app's store is used from
   * the first call after it expires (`EmailService.forgetAccount(id)` drops one at once). @default 60000
   */
  accountCacheTtlMs?: number;
  /**
   * The most accounts kept in memory at once: past it, the account resolved longest ago is dropped first
   * (its next call asks the resolver again). Nothing of an account is kept once its cache entry expired and
   * its sends ended, so this only bounds a burst of many accounts within one `accountCacheTtlMs`.
   * @default 10000
   */
  accountCacheMax?: number;
  /** Absolute base URL of the service; may carry a path prefix (`https://host/api`). */
  baseUrl: string;
  /** Deadline of a whole call, retries included, in ms. @default 30000 */
  timeoutMs?: number;
  /** Deadline to open a TCP/TLS connection, in ms. @default 10000 */
  connectTimeoutMs?: number;
  /** Retries after the first attempt. @default 2 */
  maxRetries?: number;
  /** `'auto'` generates an Idempotency-Key per send when the caller gives none. @default 'auto' */
  idempotency?: 'auto' | 'off';
  /**
   * When a send's outcome is still unknown and no retry with its key can follow, look it up in the
   * message log, adopting a record only with proof that it is the call's own (its content read back).
   * @default true
   */
  reconcile?: boolean;
  /** Sender used when an input has no `from`. */
  defaultFrom?: string;
  /** Most connections kept open to the service. @default 16 */
  connections?: number;
  /** An undici Dispatcher to send through (a ProxyAgent, a MockAgent...). Used as given, never closed by us. */
  dispatcher?: Dispatcher;
  /** Allow plain `http:` to a host that is not loopback. @default false */
  allowInsecureHttp?: boolean;
  /**
   * Where the one line per call goes (debug for a send, warn for an uncertain send or a 4xx refusal); `false`
   * for none. @default Nest's `Logger` with context `EmailModule`
   */
  logger?: LoggerService | false;
  /**
   * Spans and metrics through `@opentelemetry/api` when it is installed (see docs/observability.md);
   * `false` turns them off. `{ accountAttribute: true }` also puts the account id of a call made with
   * `{ account }` on its span and metrics (off by default: some apps use addresses as account ids).
   * @default true
   */
  telemetry?: boolean | { accountAttribute?: boolean };
  /**
   * What the service allows, in recipients and requests per interval: every request waits for its
   * share first (within its deadline), shared by every process through Redis when `redis` is given.
   * See docs/rate-limits.md. @default none (requests are sent as they come)
   */
  rateLimit?: EmailRateLimitOptions;
  /**
   * The list of addresses never to mail again (they bounced, complained, unsubscribed): every send, batch
   * and job is checked against it before any request or write, and the module learns from every record it
   * reads whose status is `bounced` or `complained` (see docs/suppression.md). `false` turns it off.
   * @default on: in the `rateLimit` Redis when there is one, else in memory (this process only)
   */
  suppression?: false | EmailSuppressionOptions;
}

/** Options with every default applied, as the service uses them. */
export interface ResolvedEmailOptions {
  readonly baseUrl: URL;
  readonly origin: string;
  readonly pathPrefix: string;
  readonly timeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly maxRetries: number;
  readonly idempotency: 'auto' | 'off';
  readonly reconcile: boolean;
  readonly defaultFrom?: string;
  readonly connections: number;
  readonly dispatcher?: Dispatcher;
  readonly logger: LoggerService | false;
  readonly telemetry: boolean;
  /** Whether spans and metrics carry the account id (`telemetry: { accountAttribute: true }`). */
  readonly accountAttribute: boolean;
  readonly rateLimit?: ResolvedRateLimitOptions;
  readonly suppression: ResolvedSuppressionOptions;
  /** Whether the module has an `apiKey` of its own (the default account). */
  readonly hasApiKey: boolean;
  /** The `accounts` option as given (the module builds its resolver from it). */
  readonly accounts?: EmailAccountsOption;
  readonly accountCacheTtlMs: number;
  readonly accountCacheMax: number;
}

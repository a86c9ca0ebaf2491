import type { EmailRateRedisClient } from './rate-limit-options.interface.js';

/**
 * Why an address is on a suppression list: it `bounced` or `complained` (marked a mail as spam), its
 * owner `unsubscribed`, or it was put there by hand (`manual`).
 * @publicApi
 */
export type EmailSuppressionReason = 'bounced' | 'complained' | 'unsubscribed' | 'manual';

/**
 * Which list a call of `EmailSuppressions` works on: the module's own account's (neither field), an
 * account's (`account`), or the module-wide list that applies to every account (`allAccounts: true`).
 * @publicApi
 */
export interface EmailSuppressionScope {
  /** The account whose list it is (as `{ account }` of a send names it). @default the module's own account */
  account?: string;
  /** The module-wide list: its addresses are refused for every account. @default false */
  allAccounts?: boolean;
}

/**
 * Options of `EmailSuppressions.add`.
 * @publicApi
 */
export interface EmailSuppressionAddOptions extends EmailSuppressionScope {
  reason: EmailSuppressionReason;
  /** When the address may be mailed again (it is refused until then). @default never */
  expiresAt?: Date;
}

/**
 * Options of `EmailSuppressions.list`.
 * @publicApi
 */
export interface EmailSuppressionListOptions extends EmailSuppressionScope {
  /** The cursor of the previous page (its `next`). @default the first page */
  after?: string;
  /** Entries per page, 1 to 1000. @default 100 */
  limit?: number;
}

/**
 * One suppressed address of one list.
 * @publicApi
 */
export interface EmailSuppression {
  /**
   * The address as the list compares it (see docs/suppression.md: lower case, no display name). With
   * `hashAddresses`, `list` cannot know it and gives the entry's keyed hash (`hmac:…`) instead, which
   * `remove` takes too.
   */
  address: string;
  reason: EmailSuppressionReason;
  /** When it was added. */
  since: Date;
  /** When it stops being refused; absent: never. */
  expiresAt?: Date;
  /** The account whose list holds it; absent on the module's own account's list and on the module-wide one. */
  account?: string;
  /** Present (true) on the module-wide list's entries. */
  allAccounts?: true;
}

/**
 * A page of `EmailSuppressions.list`, in the order of the addresses (as compared).
 * @publicApi
 */
export interface EmailSuppressionPage {
  entries: EmailSuppression[];
  /** Give it as `after` for the next page; absent on the last page. */
  next?: string;
}

/**
 * The `suppression` option of `EmailModule`: where the list of addresses never to mail again lives and
 * what the module does with it (see docs/suppression.md). Give at most one of `redis` and `postgres`;
 * with neither, the `rateLimit` Redis when there is one, else memory (one process).
 *
 * @example
 * suppression: { redis: process.env.REDIS_URL, learn: { into: 'account' } }
 * suppression: { postgres: pool, schema: 'mail' } // an app on the outbox
 * @publicApi
 */
export interface EmailSuppressionOptions {
  /**
   * A Redis every process shares: a URL, ioredis options, an ioredis client (used as given, never closed
   * by us) or a Redis Cluster. Needs the optional peer `ioredis`. @default the `rateLimit` Redis
   */
  redis?: string | Record<string, unknown> | EmailRateRedisClient;
  /** A PostgreSQL every process shares: a `pg` Pool (never ended by us) or a connection string. Needs `pg`. */
  postgres?: string | EmailSuppressionPgPool;
  /** `'memory'`: this process only, even with a `rateLimit` Redis. */
  store?: 'memory';
  /** Prefix of the Redis keys: processes with the same prefix share one list. @default 'email-suppression' */
  prefix?: string;
  /** The PostgreSQL schema of the tables (created at boot). @default 'public' */
  schema?: string;
  /**
   * Learn from every record the module reads whose `status` is `bounced` or `complained`: its recipients
   * go on the list of the account that read it (`into: 'all-accounts'`: on the module-wide list). `false`
   * learns nothing. @default true
   */
  learn?: boolean | { into?: 'account' | 'all-accounts' };
  /**
   * Reads the latest records of each account every `everyMs` (`GET /emails?limit=100`, one request per
   * account and interval across every process sharing the store, inside the `rateLimit` budgets) to learn
   * from them. @default off
   */
  sweep?: EmailSuppressionSweepOptions;
  /**
   * A message with several recipients of which some are suppressed: `'refuse'` it whole, or
   * `'send-to-rest'` (it goes to the others; refused only when none is left). @default 'refuse'
   */
  partial?: 'refuse' | 'send-to-rest';
  /**
   * Keep only keyed hashes (HMAC-SHA-256 under `secret`) in the shared store, never an address: a dump of
   * Redis or of the table shows none. Every process sharing the list needs the same secret (16+ characters).
   */
  hashAddresses?: { secret: string };
  /**
   * When the store cannot be read: `'last-known'` sends against the list as this process last knew it
   * (nothing is lost; adds made meanwhile are written once it answers), `'refuse'` refuses every send
   * (`not-sent`, retryable) until it answers. @default 'last-known'
   */
  whenStoreDown?: 'last-known' | 'refuse';
  /**
   * Most entries the local copy holds; past it a send whose recipients it does not hold reads the store
   * (one round trip). @default 2000000
   */
  maxLocalEntries?: number;
  /** Deadline of one store command, in ms (connecting at boot gets at least 5 s). @default 2000 */
  commandTimeoutMs?: number;
}

/**
 * The sweep of `suppression.sweep`.
 * @publicApi
 */
export interface EmailSuppressionSweepOptions {
  /** How often each account's latest records are read, in ms (at least 10000). */
  everyMs: number;
  /**
   * The accounts to sweep besides the module's own (when it has an `apiKey`). @default the accounts this
   * process sent for since it started
   */
  accounts?: readonly string[] | (() => readonly string[] | Promise<readonly string[]>);
}

/**
 * A `pg` Pool, typed by the part the store uses (the main entry point needs no `pg` types).
 * @publicApi
 */
export interface EmailSuppressionPgPool {
  query(...args: never[]): unknown;
  connect(...args: never[]): unknown;
}

/**
 * The suppression list as the health check sees it (absent with `suppression: false`).
 * @publicApi
 */
export interface EmailSuppressionHealth {
  /** Where the list lives. */
  store: 'memory' | 'redis' | 'postgres';
  /** Whether the store answered the check. */
  status: 'up' | 'down';
  /** Entries in this process's local copy (removals remembered included). */
  entries: number;
  /** Whether the local copy follows the store with nothing missed (a send then needs no round trip). */
  current: boolean;
  /** Entries this process added that the store has not taken yet. */
  pendingWrites: number;
}

/** The `suppression` option once checked. */
export interface ResolvedSuppressionOptions {
  readonly enabled: boolean;
  readonly store:
    | { readonly kind: 'memory' }
    | { readonly kind: 'redis'; readonly redis?: ResolvedSuppressionRedis; readonly prefix: string }
    | {
        readonly kind: 'postgres';
        readonly postgres: string | EmailSuppressionPgPool;
        readonly schema: string;
      };
  readonly learn: false | 'account' | 'all-accounts';
  readonly sweep?: EmailSuppressionSweepOptions;
  readonly partial: 'refuse' | 'send-to-rest';
  /** Whether only keyed hashes go to the store (`hashAddresses`; its secret is read with `suppressionSecretOf`). */
  readonly hashed: boolean;
  readonly whenStoreDown: 'last-known' | 'refuse';
  readonly maxLocalEntries: number;
  readonly commandTimeoutMs: number;
}

/** The Redis of the store: its own (as given), or undefined for the `rateLimit` one. */
export type ResolvedSuppressionRedis = string | Record<string, unknown> | EmailRateRedisClient;

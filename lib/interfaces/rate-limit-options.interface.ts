/**
 * One budget: at most `limit` units per `intervalMs` (fixed windows, each kept a little longer than
 * `intervalMs` so that it ends after the service's own; see docs/rate-limits.md).
 *
 * @example
 * { limit: 300, intervalMs: 1000 } // 300 per second
 * @publicApi
 */
export interface EmailRateBudget {
  /** Most units per interval: a positive integer. */
  limit: number;
  /** Length of the interval in ms: an integer of at least 1000. */
  intervalMs: number;
}

/**
 * The `rateLimit` option of `EmailModule`: what the service allows, counted before every request
 * (see docs/rate-limits.md). Give at least one of `recipients` and `requests`.
 *
 * @example
 * rateLimit: {
 *   recipients: { limit: 300, intervalMs: 1000 }, // a send counts its `to`, a batch all of its items'
 *   requests: { limit: 10, intervalMs: 1000 },    // every request: sends, batches and reads
 *   redis: process.env.REDIS_URL,                 // shared by every process; in-process without it
 * }
 * @publicApi
 */
export interface EmailRateLimitOptions {
  /** Recipients per interval: a send counts its `to` addresses, a batch the total of its items'. */
  recipients?: EmailRateBudget;
  /** Requests per interval: every request made to the service, reads and retries included. */
  requests?: EmailRateBudget;
  /**
   * A Redis shared by every process that sends with this API key: a `redis://` or `rediss://` URL,
   * ioredis options, an ioredis client (used as given, never closed by us), or a Redis Cluster:
   * `{ cluster: [{ host, port }, ...], ...clusterOptions }` or an ioredis `Cluster` (see docs/scaling.md).
   * Needs the optional peer `ioredis`. Without it each process counts on its own. With `accounts`, `redis`
   * alone (no module budget) is enough to share every account's limits and pauses. @default none (in-process)
   */
  redis?: string | Record<string, unknown> | EmailRateRedisClient;
  /**
   * Prefix of the limiter's Redis keys: processes with the same prefix share one budget. On a Redis
   * Cluster it must hold a hash tag (`{shop-rate}`): an untagged one is refused at boot.
   * @default 'email-rate' ('{email-rate}' on a cluster)
   */
  prefix?: string;
}

/**
 * An ioredis client, `Redis` or `Cluster`, as `rateLimit.redis` takes it: typed by its shape, so that the
 * package's main entry point needs no ioredis types.
 */
export interface EmailRateRedisClient {
  ping(...args: never[]): unknown;
  defineCommand(...args: never[]): unknown;
}

/** A budget as the limiter uses it. */
export interface ResolvedRateBudget {
  readonly limit: number;
  readonly intervalMs: number;
}

/** The `rateLimit` option once checked. */
export interface ResolvedRateLimitOptions {
  readonly recipients?: ResolvedRateBudget;
  readonly requests?: ResolvedRateBudget;
  readonly redis?: string | Record<string, unknown> | EmailRateRedisClient;
  readonly prefix: string;
}

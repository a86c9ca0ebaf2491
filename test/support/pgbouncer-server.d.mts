/** A PgBouncer for tests, the chaos run and the benches: a private one, or the two at PGBOUNCER_*_URL. */
export interface TestPgBouncer {
  /** The private PgBouncer's port (undefined with PGBOUNCER_*_URL). */
  port?: number;
  /** A database in `pool_mode=transaction`: a server connection per transaction, shared by the clients. */
  transactionUrl: string;
  /** A database in `pool_mode=session`: a server connection per client connection, as long as it lasts. */
  sessionUrl: string;
  /** PgBouncer's own console (`SHOW POOLS`, `SHOW SERVERS`), as its admin user `postgres`. */
  adminUrl?: string;
  /** The URL of `db` (`transaction`, `session`) as `user` (a user named in `options.users`). */
  url?: (db: 'transaction' | 'session' | 'pgbouncer', user?: string) => string;
  /** Stops the private PgBouncer and removes its directory (no-op with PGBOUNCER_*_URL). */
  stop: () => Promise<void>;
  /** PgBouncer's log so far. */
  log: () => string;
}

/**
 * Starts PgBouncer (Debian's `pgbouncer`) on a free 127.0.0.1 port in front of the private PostgreSQL at
 * `target`, with a `transaction` and a `session` database; or uses PGBOUNCER_TRANSACTION_URL and
 * PGBOUNCER_SESSION_URL when both are set.
 */
export function startPgBouncer(
  target: string,
  options?: { poolSize?: number; users?: string[] },
): Promise<TestPgBouncer>;

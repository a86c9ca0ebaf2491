/** How long "no standby" is believed before PostgreSQL is asked again. */
const NONE_SEEN_FOR_MS = 1000;
/** The longest pause between two looks at the standbys' progress. */
const MAX_PAUSE_MS = 50;

/**
 * Where the primary's WAL is now, and how many of the standbys streaming from it ($1: their `application_name`s,
 * null for all) have not flushed it yet; `hidden`: standbys this role may not see the progress of (without
 * `pg_read_all_stats`, `pg_stat_replication` shows their pid only).
 */
const FIRST_LOOK =
  `SELECT w.lsn::text AS lsn, count(r.pid) FILTER (WHERE r.state = 'streaming' AND r.flush_lsn < w.lsn ` +
  `AND ($1::text[] IS NULL OR r.application_name = ANY ($1::text[])))::int AS behind, ` +
  `count(r.pid) FILTER (WHERE r.state IS NULL)::int AS hidden, count(r.pid)::int AS standbys ` +
  `FROM (SELECT pg_current_wal_insert_lsn() AS lsn) w LEFT JOIN pg_stat_replication r ON true GROUP BY w.lsn`;

/** How many of those standbys ($2) have not flushed the WAL up to $1 yet. */
const LOOK_AGAIN =
  `SELECT count(*)::int AS behind FROM pg_stat_replication WHERE state = 'streaming' AND flush_lsn < $1::pg_lsn ` +
  `AND ($2::text[] IS NULL OR application_name = ANY ($2::text[]))`;

type Query = (text: string, values: unknown[]) => Promise<{ rows: Array<Record<string, unknown>> }>;

/**
 * Holds the worker's sends until PostgreSQL's standbys have the commits of the jobs it fetched. With asynchronous
 * replication a commit the primary answered may not have reached a standby when the primary dies: the standby
 * promoted then has neither the app's rows nor their job. A job sent before its commit reached the standby would
 * be an email about rows that no longer exist, so the worker first waits until every standby streaming from the
 * primary (or those named) has flushed the WAL written up to its fetch (one look, at once where none is behind).
 * With synchronous replication a commit is on the standby before it can be fetched, so the first look passes.
 * While no standby streams, PostgreSQL is asked again at most once a second.
 */
export class OutboxStandbys {
  /** When a look last found no standby at all. */
  private noneSeenAt = -Infinity;
  private warned = false;
  /** Fetches whose sends waited for a standby (for specs and benchmarks). */
  waits = 0;

  constructor(
    private readonly query: Query,
    /** The `application_name`s of the standbys to wait for; undefined: every standby. */
    private readonly names: readonly string[] | undefined,
    private readonly warn: (message: string) => void,
  ) {}

  /**
   * Resolves true once the standbys have every commit seen so far (or none streams, or `running` turned false:
   * the caller then gives its jobs back), false when PostgreSQL failed meanwhile (a failover: the jobs go back).
   */
  async caughtUp(running: () => boolean): Promise<boolean> {
    if (Date.now() - this.noneSeenAt < NONE_SEEN_FOR_MS) return true;
    const names = this.names === undefined ? null : [...this.names];
    try {
      const { rows } = await this.query(FIRST_LOOK, [names]);
      const first = rows[0] ?? {};
      if (Number(first.standbys) === 0) this.noneSeenAt = Date.now();
      if (Number(first.hidden) > 0 && !this.warned) {
        this.warned = true;
        this.warn(
          `PostgreSQL streams to ${String(first.hidden)} standby(s) whose progress this role may not read ` +
            `(GRANT pg_read_all_stats): emails are sent without waiting for them, so a failover to one of them ` +
            `with asynchronous replication may lose rows whose email went out`,
        );
      }
      let behind = Number(first.behind);
      if (behind > 0) this.waits++;
      for (let pause = 1; behind > 0 && running(); pause = Math.min(2 * pause, MAX_PAUSE_MS)) {
        await new Promise((r) => setTimeout(r, pause));
        behind = Number((await this.query(LOOK_AGAIN, [first.lsn, names])).rows[0]?.behind);
      }
      return true;
    } catch {
      return false;
    }
  }
}

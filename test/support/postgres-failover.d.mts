import type { TestPostgres } from './postgres-server.mjs';

/** A primary with a streaming standby and HAProxy in front: the topology a failover is made in. */
export interface FailoverTopology {
  /** The one address the app is given: HAProxy, which sends each new connection to the primary. */
  url: string;
  /** The node that takes writes now. */
  readonly primary: TestPostgres;
  /** The node streaming from it (a crashed former primary until `rejoin`). */
  readonly standby: TestPostgres;
  /** Failovers so far. */
  readonly failovers: number;
  /**
   * Crashes the primary (SIGKILL of every process), runs `beforePromote` while no node takes writes, promotes
   * the standby (`pg_ctl promote`), and resolves once HAProxy sends new connections to it.
   */
  failover(options?: { beforePromote?: () => Promise<void> }): Promise<void>;
  /** The crashed node comes back as a standby of the new primary (a fresh `pg_basebackup`, its old port). */
  rejoin(options?: { synchronous?: boolean }): Promise<void>;
  /** Freezes the primary's WAL senders (SIGSTOP): its commits reach no standby until the returned function runs. */
  holdReplication(): Promise<() => void>;
  /** Stops HAProxy and both nodes, and removes their directories. */
  stop(): Promise<void>;
}

/**
 * Starts a primary and its streaming standby (private PostgreSQL servers; `synchronous`, by default true: the
 * primary's commits wait for the standby's flush) and HAProxy in front. Always private servers.
 */
export function startFailoverTopology(options?: {
  synchronous?: boolean;
  settings?: Record<string, string | number>;
}): Promise<FailoverTopology>;

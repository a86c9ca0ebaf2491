/** A private HAProxy in TCP mode in front of PostgreSQL servers, routing new connections to the primary. */
export interface TestHaproxy {
  port: number;
  /** `postgres://postgres@127.0.0.1:<port>/postgres`. */
  url: string;
  /**
   * HAProxy's own view of each server, by PostgreSQL port: `UP`, `DOWN`, or on the way (`UP 1/3`, `DOWN 1/2`). At
   * start every server is UP until its first check.
   */
  states: () => Promise<Record<number, string>>;
  /** Stops HAProxy and its health checks, and removes its directory. */
  stop: () => Promise<void>;
}

/**
 * Starts HAProxy (Debian's `haproxy`) on a free 127.0.0.1 port in front of the PostgreSQL servers on `pgPorts`:
 * each new connection goes to the one an HTTP check calls primary (`pg_is_in_recovery()` false, every `checkMs`),
 * and the connections to a server whose check fails are closed.
 */
export function startHaproxy(pgPorts: number[], options?: { checkMs?: number }): Promise<TestHaproxy>;

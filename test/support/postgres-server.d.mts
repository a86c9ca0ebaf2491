/** A PostgreSQL for tests, the sample and benches: a private server on a free 127.0.0.1 port, or the one at DATABASE_URL. */
export interface TestPostgres {
  /** A connection string (`postgres://postgres@127.0.0.1:<port>/postgres`, or DATABASE_URL). */
  url: string;
  /** The private server's port (undefined with DATABASE_URL). */
  port?: number;
  /** Stops the private server and removes its directory (no-op for DATABASE_URL). */
  stop: () => Promise<void>;
  /** Takes the private server down (fast shutdown); its data stays for `restart`. */
  kill: () => Promise<void>;
  /** Takes the private server down if it runs, and starts it again on the same port and data. */
  restart: () => Promise<void>;
  /**
   * Freezes the private server (SIGSTOP of the postmaster and of every process it forked, backends included):
   * connections stay open, nothing is answered, no new connection is accepted. Throws with DATABASE_URL.
   */
  pause: () => void;
  /** Thaws a paused server (SIGCONT of the same processes). Throws with DATABASE_URL. */
  resume: () => void;
}

/** The newest `/usr/lib/postgresql/<major>/bin` holding `initdb` and `postgres`, or undefined. */
export function postgresBinDir(): string | undefined;

/**
 * Starts a private PostgreSQL (initdb in a temporary directory, trust auth, fsync off, 127.0.0.1 on a free
 * port; as the `postgres` OS user when running as root), or uses DATABASE_URL.
 */
export function startPostgres(): Promise<TestPostgres>;

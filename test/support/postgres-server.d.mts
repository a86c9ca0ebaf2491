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
  /**
   * Kills the private server as a machine that dies would: SIGKILL of the postmaster and of every process it
   * forked, nothing flushed. Its data stays (`restart` runs crash recovery). Throws with DATABASE_URL.
   */
  crash: () => Promise<void>;
  /** Promotes a standby (`pg_ctl promote -w`): it takes writes once this returns. Throws with DATABASE_URL. */
  promote: () => void;
  /** The server's log so far (with `options.log`; empty otherwise). */
  log: () => string;
  /** The postmaster's pid while it runs. */
  pid: () => number | undefined;
}

/** How to start a private server (any of these: a private server whatever DATABASE_URL says). */
export interface PostgresOptions {
  /** More `-c` settings, overriding the defaults (fsync off, synchronous_commit off, max_connections 300, ...). */
  settings?: Record<string, string | number>;
  /** The port of a private server to copy with `pg_basebackup -R`: the new server is its streaming standby. */
  standbyOf?: number;
  /** Keep the server's log in its directory (`log()` reads it). */
  log?: boolean;
  /** Listen on this port (a node that rejoins where it was) instead of a free one. */
  port?: number;
}

/** The newest `/usr/lib/postgresql/<major>/bin` holding `initdb` and `postgres`, or undefined. */
export function postgresBinDir(): string | undefined;

/**
 * Starts a private PostgreSQL (initdb in a temporary directory, trust auth, fsync off, 127.0.0.1 on a free
 * port; as the `postgres` OS user when running as root), or uses DATABASE_URL (without `options`).
 */
export function startPostgres(options?: PostgresOptions): Promise<TestPostgres>;

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number>;

/** The uid and gid of the `postgres` OS user when running as root (servers refuse root), else undefined. */
export function runAs(): { uid: number; gid: number } | undefined;

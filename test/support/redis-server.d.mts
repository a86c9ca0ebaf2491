/** A Redis for tests and benches: a private `redis-server` on a free 127.0.0.1 port, or the one at REDIS_URL. */
export interface TestRedis {
  url: string;
  /** Stops the private server and removes its data (no-op for REDIS_URL). */
  stop: () => Promise<void>;
  /** Stops the private server (SIGKILL, or SIGTERM with `graceful`) and keeps its data. */
  kill: (how?: { graceful?: boolean }) => Promise<void>;
  /** Freezes the private server (SIGSTOP): connections stay open, nothing is answered. */
  pause: () => void;
  /** Thaws a paused server (SIGCONT). */
  resume: () => void;
  /** Kills the private server if it runs, and starts it again on the same port and data directory. */
  restart: () => Promise<void>;
}

/**
 * Starts `redis-server` on a free port (or uses REDIS_URL) and waits until it answers. Persistence is off
 * unless `aof` (append-only file, fsync always) is set.
 */
export function startRedis(options?: { aof?: boolean }): Promise<TestRedis>;

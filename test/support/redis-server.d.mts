/** A Redis for tests and benches: a private `redis-server` on a free 127.0.0.1 port, or the one at REDIS_URL. */
export interface TestRedis {
  url: string;
  /** Stops the private server (no-op for REDIS_URL). */
  stop: () => Promise<void>;
}

/** Starts `redis-server` with persistence off on a free port (or uses REDIS_URL) and waits until it answers. */
export function startRedis(): Promise<TestRedis>;

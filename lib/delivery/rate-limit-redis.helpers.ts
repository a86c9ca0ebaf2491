import type { Cluster, Redis } from 'ioredis';
import {
  isClusterConnection,
  isRedisClient,
  openRedis,
  type RedisConnectionInput,
} from '../peers/ioredis.loader.js';
import { EmailOptionsError } from '../errors/email-options.error.js';
import { BOOT_CONNECT_MIN_MS, withTimeout } from '../time/clock.helpers.js';
import type { EmailRateRedisClient } from '../interfaces/rate-limit-options.interface.js';

/** A single Redis or a Redis Cluster: the limiter sends the same single-key commands to either. */
type RedisClient = Redis | Cluster;

/** The feature the missing-peer error names. */
const FEATURE = 'EmailModule rateLimit.redis';

/** A Redis connection for the limiter, how to check that it answers, and how to let it go. */
export interface RateRedis {
  readonly client: RedisClient;
  /**
   * Connects and checks that Redis answers `PING` within `timeoutMs` (the boot's check, when the module
   * initialises), so that a Redis that is down fails the boot, naming the option, rather than the first send.
   * @throws EmailOptionsError when it does not answer.
   */
  check(): Promise<void>;
  /** Closes the connection when we opened it; a client given by the app is left open. */
  close(): Promise<void>;
}

/** The reason Redis gave, without the URL (it may carry a password). */
const reason = (err: unknown): string =>
  (err instanceof Error ? err.message : String(err)).replace(/rediss?:\/\/\S+/g, '<url>');

/**
 * The Redis the limiter shares between processes: the app's client, or one opened here from a URL or options
 * that connects only at `check()` (the module's initialisation) or at its first command, so that a boot that
 * fails on another provider leaves no connection behind (Nest never closes a module whose boot failed). A
 * cluster (`{ cluster: [...] }` or an ioredis `Cluster`) is opened as an ioredis `Cluster`; the limiter's keys
 * are then hash-tagged by its prefix (`resolveRateLimit`), one slot per limiter.
 */
export function openRateRedis(
  redis: string | Record<string, unknown> | EmailRateRedisClient,
  timeoutMs = BOOT_CONNECT_MIN_MS,
): RateRedis {
  if (isRedisClient(redis)) {
    return {
      client: redis,
      check: async () => {
        try {
          await withTimeout(redis.ping(), timeoutMs, 'Redis');
        } catch (err) {
          throw new EmailOptionsError([
            `rateLimit.redis: the ioredis client given does not answer (${reason(err)})`,
          ]);
        }
      },
      close: async () => undefined,
    };
  }
  let checking = false;
  const cluster = isClusterConnection(redis);
  const options = typeof redis === 'string' ? {} : (redis as Record<string, unknown>);
  const given = (cluster ? options.clusterRetryStrategy : options.retryStrategy) as
    ((n: number) => number | void | null) | undefined;
  // No reconnecting during the boot's check (a Redis that is down fails the boot); otherwise, the app's own
  // retry strategy when its options give one, else ioredis's default backoff.
  const retry = (times: number) => (checking ? null : given ? given(times) : Math.min(times * 50, 2_000));
  const node = {
    maxRetriesPerRequest: 1,
    disconnectTimeout: 200, // ioredis holds the process 2 s by default after closing a connection that failed
  };
  const client = cluster
    ? openRedis(
        redis as RedisConnectionInput,
        { node, cluster: { lazyConnect: true, clusterRetryStrategy: retry } },
        FEATURE,
      )
    : openRedis(
        redis as RedisConnectionInput,
        { node: { ...node, lazyConnect: true, retryStrategy: retry } },
        FEATURE,
      );
  client.on('error', () => undefined); // reconnects on its own; the limiter falls back meanwhile
  return {
    client,
    check: async () => {
      if (client.status === 'ready') return;
      checking = true;
      try {
        await withTimeout(
          (client.status === 'wait' ? client.connect() : Promise.resolve()).then(() => client.ping()),
          timeoutMs,
          'Redis',
        );
      } catch (err) {
        client.disconnect();
        throw new EmailOptionsError([`rateLimit.redis: cannot reach Redis (${reason(err)})`]);
      } finally {
        checking = false;
      }
    },
    close: async () => {
      // A client that lost Redis would queue QUIT until it reconnects: drop it at once instead.
      if (client.status !== 'ready') return client.disconnect();
      await withTimeout(client.quit(), timeoutMs, 'Redis').catch(() => client.disconnect());
    },
  };
}

import type { Cluster, Redis } from 'ioredis';
import { openRedis, type RedisConnectionInput } from '../peers/redis-connection.helpers.js';

/** How long a connection we end may take to close its socket before it is destroyed. */
const DISCONNECT_TIMEOUT_MS = 100;

/** Which of the queue's connections: the one that queues, reads and checks, or the worker's. */
export type QueueConnectionRole = 'producer' | 'worker';

/**
 * A connection of the queue's own, from any form of `connection` (a URL, ioredis options, an ioredis
 * `Redis`, `{ cluster: [...] }`, an ioredis `Cluster`; a client of the app's is duplicated, never used).
 *
 * - `producer`: refuses commands while Redis (or, on a cluster, the cluster) is away instead of queueing
 *   them (`enableOfflineQueue: false`, on the cluster itself for a `Cluster`: ioredis keeps each node's own
 *   offline queue on), never replays an unanswered command after a reconnect, one retry per command, and
 *   `commandTimeout` of `enqueueTimeoutMs` on every node.
 * - `worker`: waits for Redis (`maxRetriesPerRequest: null`, which BullMQ requires of a blocking
 *   connection, on every node of a cluster).
 *
 * Both drop a socket 100 ms after ending it (`disconnectTimeout`, ioredis's default being 2 s): ioredis ends
 * a connection that way at close, and, for one waiting to reconnect (Redis away), on a socket already
 * closed, whose timer then runs its full length after the app has closed.
 *
 * Connecting starts at once (also for a duplicate of a `lazyConnect` client): the producer refuses
 * commands until it is ready, so wait for its `ready` event before the first command.
 *
 * On a cluster, give BullMQ a hash-tagged prefix (`resolveEmailQueueOptions` sees to it): BullMQ's
 * scripts touch many keys of a queue at once, which a cluster allows only on one slot.
 * @throws MissingPeerError when ioredis is not installed.
 */
export function queueConnection(
  connection: RedisConnectionInput,
  role: QueueConnectionRole,
  enqueueTimeoutMs: number,
): Redis | Cluster {
  const conn =
    role === 'producer'
      ? openRedis(
          connection,
          {
            node: {
              enableOfflineQueue: false,
              autoResendUnfulfilledCommands: false,
              maxRetriesPerRequest: 1,
              disconnectTimeout: DISCONNECT_TIMEOUT_MS,
              ...(enqueueTimeoutMs > 0 ? { commandTimeout: enqueueTimeoutMs } : {}),
            },
            cluster: { enableOfflineQueue: false },
          },
          'EmailQueueModule',
        )
      : openRedis(
          connection,
          { node: { maxRetriesPerRequest: null, disconnectTimeout: DISCONNECT_TIMEOUT_MS } },
          'EmailQueueModule',
        );
  conn.on('error', () => undefined);
  // Ours: connected now even when the app's client it duplicates connects lazily (its failure shows in use)
  if (conn.status === 'wait') conn.connect().catch(() => undefined);
  return conn;
}

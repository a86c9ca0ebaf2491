import type { Cluster, Redis } from 'ioredis';
import {
  isClusterNodes,
  isRedisCluster,
  openRedis,
  type RedisConnectionInput,
} from '../peers/ioredis.loader.js';

/**
 * How many times the worker's cluster client tries a command again on the errors of a failover ("Connection
 * is closed", CLUSTERDOWN, MOVED): about a minute at ioredis's 100 ms between tries, where its default (16)
 * gives up after some 1.6 s, well before a failover ends (cluster-node-timeout plus the election: 2 to 3 s at
 * 1,000 ms, 15 to 20 s at the default 15,000 ms).
 */
export const WORKER_CLUSTER_REDIRECTIONS = 600;

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
 *   connection, on every node of a cluster), and on a cluster rides out a failover
 *   (`WORKER_CLUSTER_REDIRECTIONS`, or the app's `maxRedirections` when larger).
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
          {
            node: { maxRetriesPerRequest: null, disconnectTimeout: DISCONNECT_TIMEOUT_MS },
            cluster: { maxRedirections: workerRedirections(connection) },
          },
          'EmailQueueModule',
        );
  conn.on('error', () => undefined);
  // Ours: connected now even when the app's client it duplicates connects lazily (its failure shows in use)
  if (conn.status === 'wait') conn.connect().catch(() => undefined);
  return conn;
}

/**
 * The worker's `maxRedirections` on a cluster. With ioredis's 16, a command BullMQ's worker sends while the
 * master of the queue's slot fails over (the job's completion, a lock renewal, a move to delayed) ends in
 * "Too many Cluster redirections", which BullMQ, not knowing it for a connection error, takes for the job's
 * own failure: it failed jobs whose email was sent and whose record said so (`npm run bench:queue-cluster`,
 * 6 to 11 of the ~32 in flight at the kill), and a lock renewal lost that way made a job look stalled.
 * Waiting for the promoted replica instead is what the worker does on a single Redis.
 */
function workerRedirections(connection: RedisConnectionInput): number {
  const given = isRedisCluster(connection)
    ? connection.options.maxRedirections
    : isClusterNodes(connection)
      ? connection.maxRedirections
      : undefined;
  return Math.max(given ?? 0, WORKER_CLUSTER_REDIRECTIONS);
}

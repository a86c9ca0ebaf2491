import type { Cluster, ClusterNode, ClusterOptions, Redis, RedisOptions } from 'ioredis';
import { requirePeer } from './optional-peer.loader.js';

// ioredis, loaded here only: the Redis connections of the rate limit and the queue, in every form an app
// may hold them (a URL, ioredis options, an ioredis `Redis`, `{ cluster: [nodes], ...clusterOptions }`, or
// an ioredis `Cluster`), told apart and opened. The Redis Cluster rules both obey: redis-cluster.helpers.ts.

/**
 * A Redis Cluster given by its nodes: `{ cluster: [{ host, port }, ...], ...clusterOptions }` (any of
 * ioredis's `ClusterOptions` beside `cluster`, e.g. `redisOptions: { password }`, `natMap`).
 */
export type RedisClusterNodes = { cluster: ClusterNode[] } & ClusterOptions;

/** Every form a Redis connection option takes. */
export type RedisConnectionInput = string | RedisOptions | Redis | Cluster | RedisClusterNodes;

/** An ioredis `Cluster` (ioredis marks it `isCluster`, as BullMQ checks it). */
export function isRedisCluster(value: unknown): value is Cluster {
  return typeof value === 'object' && value !== null && (value as { isCluster?: unknown }).isCluster === true;
}

/** The `{ cluster: [...] }` form (not a client: an ioredis client has a `cluster` method). */
export function isClusterNodes(value: unknown): value is RedisClusterNodes {
  return typeof value === 'object' && value !== null && 'cluster' in value && !isRedisClient(value);
}

/** An ioredis client (`Redis` or `Cluster`), as opposed to options for one. */
export function isRedisClient(value: unknown): value is Redis | Cluster {
  const v = value as { defineCommand?: unknown; ping?: unknown } | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.defineCommand === 'function' &&
    typeof v.ping === 'function'
  );
}

/** True when the connection is a Redis Cluster (either form). */
export function isClusterConnection(connection: unknown): boolean {
  return isRedisCluster(connection) || isClusterNodes(connection);
}

/** Options of a connection we open: those of each node, and for a cluster those of the cluster itself. */
export interface OwnRedisOptions {
  /** Set on a single Redis, or on every node of a cluster (`redisOptions`); they win over the app's. */
  node: RedisOptions;
  /** Set on a cluster's own options (e.g. `enableOfflineQueue`, `clusterRetryStrategy`); they win over the app's. */
  cluster?: Partial<ClusterOptions>;
}

type IoRedisModule = typeof import('ioredis');

/**
 * Opens a connection of our own from any form of the option: a URL or options give a new `Redis`, an
 * ioredis `Redis` is duplicated, `{ cluster: [...] }` gives a new `Cluster`, an ioredis `Cluster` is
 * duplicated (same nodes and options). `own` wins over the app's settings (the app's client is never
 * changed); pass `lazyConnect: true` in it to connect only when the caller says.
 * @throws MissingPeerError when ioredis is not installed (naming `feature`).
 */
export function openRedis(
  connection: RedisConnectionInput,
  own: OwnRedisOptions,
  feature: string,
): Redis | Cluster {
  if (isRedisCluster(connection)) {
    const given = connection.options;
    return connection.duplicate([], clusterOwn(given, own));
  }
  const mod = requirePeer<IoRedisModule & { default?: IoRedisModule['Redis'] }>('ioredis', feature);
  if (isClusterNodes(connection)) {
    const { cluster: nodes, ...options } = connection;
    const ClusterCtor = mod.Cluster ?? (mod.default as unknown as IoRedisModule).Cluster;
    return new ClusterCtor(nodes, clusterOwn(options, own));
  }
  if (isRedisClient(connection)) return (connection as Redis).duplicate(own.node);
  const RedisCtor = mod.Redis ?? (mod.default as IoRedisModule['Redis']);
  return typeof connection === 'string'
    ? new RedisCtor(connection, own.node)
    : new RedisCtor({ ...connection, ...own.node });
}

function clusterOwn(given: Partial<ClusterOptions>, own: OwnRedisOptions): ClusterOptions {
  return {
    ...given,
    ...own.cluster,
    redisOptions: { ...given.redisOptions, ...own.node },
  };
}

/** `host:port` of one connection (a single Redis, or one node of a cluster), for messages: never a password. */
export function nodeNameOf(client: Redis): string {
  const { host, port, path } = client.options;
  return path ? String(path) : `${host ?? '127.0.0.1'}:${port ?? 6379}`;
}

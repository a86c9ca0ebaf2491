import type { Cluster, ClusterNode, ClusterOptions, Redis, RedisOptions } from 'ioredis';
import { requirePeer } from './optional-peer.loader.js';

// The Redis connections of the rate limit and the queue, in every form an app may hold them: a URL,
// ioredis options, an ioredis `Redis`, `{ cluster: [nodes], ...clusterOptions }`, or an ioredis `Cluster`.
// Also the Redis Cluster rules both obey: a key's slot, and the hash tag that keeps related keys on one.

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

/**
 * What is wrong with a `{ cluster: [...] }` form, one line per problem, each starting with `name`
 * (nodes are shown as host:port, never with a password; an empty list when it is right).
 */
export function clusterNodesProblems(value: RedisClusterNodes, name: string): string[] {
  const nodes: unknown = value.cluster;
  if (!Array.isArray(nodes) || nodes.length === 0) {
    return [`${name}.cluster must be a non-empty array of nodes { host, port } (got ${describe(nodes)})`];
  }
  const problems: string[] = [];
  nodes.forEach((node: unknown, i) => {
    if (typeof node === 'number' && validPort(node)) return;
    if (typeof node === 'string' && /^[^\s/@]+:\d+$/.test(node) && validPort(Number(node.split(':').pop())))
      return;
    if (typeof node === 'object' && node !== null && !Array.isArray(node)) {
      const { host, port } = node as { host?: unknown; port?: unknown };
      const hostOk = host === undefined || (typeof host === 'string' && host !== '');
      const portOk = port === undefined || validPort(port);
      if (hostOk && portOk) return;
    }
    problems.push(
      `${name}.cluster[${i}] must be a node { host, port } with a port from 1 to 65535 (got ${describe(node)})`,
    );
  });
  return problems;
}

const validPort = (port: unknown): boolean =>
  Number.isInteger(port) && (port as number) >= 1 && (port as number) <= 65535;

function describe(value: unknown): string {
  if (typeof value === 'string')
    return value.includes('@') ? 'a string with credentials' : JSON.stringify(value);
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'object' && value !== null) return 'an object';
  if (typeof value === 'function') return 'a function';
  return String(value);
}

/**
 * The hash tag of a key or prefix, as Redis Cluster reads it: what lies between its first `{` and the
 * first `}` after it, when that is not empty. Keys with the same tag live on the same slot.
 */
export function hashTagOf(text: string): string | undefined {
  const open = text.indexOf('{');
  if (open === -1) return undefined;
  const close = text.indexOf('}', open + 1);
  return close > open + 1 ? text.slice(open + 1, close) : undefined;
}

/**
 * Why `prefix` cannot be used on a Redis Cluster, or undefined when it can: every key the queue or
 * the limiter writes starts with it, and their multi-key scripts need all of them on one slot, which
 * only a hash tag (`{email}`) gives.
 */
export function clusterPrefixProblem(prefix: string, name: string): string | undefined {
  if (hashTagOf(prefix) !== undefined) return undefined;
  return (
    `${name} ${JSON.stringify(prefix)} has no hash tag: on a Redis Cluster every key it starts must live ` +
    `on one slot, which only a tag in braces gives (use e.g. ${JSON.stringify(`{${prefix.replace(/[{}]/g, '') || 'email'}}`)})`
  );
}

const CRC16_POLY = 0x1021;

/** The CRC16 (XMODEM) Redis Cluster hashes keys with. */
function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++)
      crc = crc & 0x8000 ? ((crc << 1) ^ CRC16_POLY) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/** The slot (0 to 16383) of `key` on a Redis Cluster: its hash tag's when it has one. */
export function keySlot(key: string): number {
  return crc16(new TextEncoder().encode(hashTagOf(key) ?? key)) % 16384;
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

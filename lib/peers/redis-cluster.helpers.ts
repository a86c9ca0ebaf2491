import type { RedisClusterNodes } from './ioredis.loader.js';

// The Redis Cluster rules the rate limit and the queue obey: the nodes of a `{ cluster: [...] }` option,
// a key's slot, and the hash tag that keeps related keys on one slot.

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

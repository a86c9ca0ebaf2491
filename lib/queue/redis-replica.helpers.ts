import type { Cluster, Redis } from 'ioredis';
import { isRedisCluster, nodeNameOf } from '../peers/ioredis.loader.js';
import { keySlot } from '../peers/redis-cluster.helpers.js';

// Redis replicates asynchronously: a write the master answered can be lost if the master dies before a
// replica has it. `WAIT n ms` holds the answer until n replicas acknowledged every earlier write of the
// same connection (or the time is up) and says how many did. These helpers find that connection.

/**
 * The connection that wrote `key`: the client itself for a single Redis; for a cluster, ioredis's own
 * connection to the master that owns the key's slot (the one the cluster sent the write on), or
 * undefined while the cluster has no master for it.
 */
export function writerOf(client: Redis | Cluster, key: string): Redis | undefined {
  if (!isRedisCluster(client)) return client;
  const owner = client.slots[keySlot(key)]?.[0];
  if (owner === undefined) return undefined;
  return client.nodes('master').find((node) => nodeNameOf(node) === owner);
}

/**
 * How many replicas the master that holds `key` has now (`INFO replication`'s `connected_slaves` of the
 * writer): 0 means `WAIT` cannot confirm anything there.
 */
export async function replicaCountOf(client: Redis | Cluster, key: string): Promise<number> {
  const writer = writerOf(client, key);
  if (writer === undefined) return 0;
  const info = await writer.info('replication');
  const match = /connected_slaves:(\d+)/.exec(info);
  return match ? Number(match[1]) : 0;
}

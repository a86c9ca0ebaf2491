import type { Cluster, Redis } from 'ioredis';
import { isRedisCluster, nodeNameOf } from '../peers/ioredis.loader.js';

/** What the queue learned about whether its Redis keeps jobs through a restart and under memory pressure. */
export interface RedisDurability {
  /**
   * One sentence per setting that would lose jobs, naming the setting and the value to set; on a
   * cluster, each starts with the master it is about (`127.0.0.1:7001: appendonly is ...`).
   */
  problems: string[];
  /** Set when the settings could not be read (CONFIG disabled, Redis down; on a cluster, naming the master). */
  unchecked?: string;
}

async function configValue(client: Redis, name: string): Promise<string> {
  const reply = (await client.config('GET', name)) as unknown as string[];
  return String(reply[1] ?? '');
}

/** The problems of one Redis (one CONFIG GET per setting), each prefixed with `label`. */
async function problemsOf(client: Redis, label: string): Promise<string[]> {
  const [aof, save, policy] = await Promise.all(
    ['appendonly', 'save', 'maxmemory-policy'].map((name) => configValue(client, name)),
  );
  const problems: string[] = [];
  if (aof !== 'yes' && save.trim() === '') {
    problems.push(
      `${label}appendonly is "no" and save is empty: a Redis restart loses every queued email ` +
        '(set appendonly yes, or save "60 1000")',
    );
  }
  if (policy !== '' && policy !== 'noeviction') {
    problems.push(
      `${label}maxmemory-policy is "${policy}": Redis may evict queued emails when memory runs out ` +
        '(set maxmemory-policy noeviction)',
    );
  }
  return problems;
}

/**
 * Reads `appendonly`, `save` and `maxmemory-policy` and says which would lose queued emails: no AOF and
 * no RDB snapshots (a restart empties the queue), or an eviction policy other than `noeviction` (Redis
 * deletes jobs when memory runs out). On a Redis Cluster, every master the client knows is read (a
 * replica is read once it is promoted, as every check runs again), and each problem names its master.
 */
export async function checkRedisDurability(client: Redis | Cluster): Promise<RedisDurability> {
  if (!isRedisCluster(client)) {
    try {
      return { problems: await problemsOf(client, '') };
    } catch (err) {
      return { problems: [], unchecked: (err as Error).message };
    }
  }
  const masters = client.nodes('master').sort((a, b) => nodeNameOf(a).localeCompare(nodeNameOf(b)));
  if (masters.length === 0) return { problems: [], unchecked: 'no master of the Redis Cluster is known yet' };
  const results = await Promise.all(
    masters.map((node) => {
      const name = nodeNameOf(node);
      return problemsOf(node, `${name}: `).then(
        (problems) => ({ problems }),
        (err: Error) => ({ problems: [], unchecked: `${name}: ${err.message}` }),
      );
    }),
  );
  const unchecked = results.flatMap((r) => ('unchecked' in r ? [r.unchecked] : []));
  return {
    problems: results.flatMap((r) => r.problems),
    ...(unchecked.length > 0 ? { unchecked: unchecked.join('; ') } : {}),
  };
}

import type { Redis } from 'ioredis';

/** What the queue learned about whether its Redis keeps jobs through a restart and under memory pressure. */
export interface RedisDurability {
  /** One sentence per setting that would lose jobs, naming the setting and the value to set. */
  problems: string[];
  /** Set when the settings could not be read (CONFIG disabled, Redis down): nothing is claimed. */
  unchecked?: string;
}

async function configValue(client: Redis, name: string): Promise<string> {
  const reply = (await client.config('GET', name)) as unknown as string[];
  return String(reply[1] ?? '');
}

/**
 * Reads `appendonly`, `save` and `maxmemory-policy` (one CONFIG GET each) and says which would lose
 * queued emails: no AOF and no RDB snapshots (a restart empties the queue), or an eviction policy
 * other than `noeviction` (Redis deletes jobs when memory runs out).
 */
export async function checkRedisDurability(client: Redis): Promise<RedisDurability> {
  try {
    const [aof, save, policy] = await Promise.all(
      ['appendonly', 'save', 'maxmemory-policy'].map((name) => configValue(client, name)),
    );
    const problems: string[] = [];
    if (aof !== 'yes' && save.trim() === '') {
      problems.push(
        'appendonly is "no" and save is empty: a Redis restart loses every queued email ' +
          '(set appendonly yes, or save "60 1000")',
      );
    }
    if (policy !== '' && policy !== 'noeviction') {
      problems.push(
        `maxmemory-policy is "${policy}": Redis may evict queued emails when memory runs out ` +
          '(set maxmemory-policy noeviction)',
      );
    }
    return { problems };
  } catch (err) {
    return { problems: [], unchecked: (err as Error).message };
  }
}

import { Queue, Worker } from 'bullmq';
import { Cluster, type Redis } from 'ioredis';
import { EmailOptionsError } from '../../lib/index.js';
import { hashTagOf, keySlot } from '../../lib/peers/redis-cluster.helpers.js';
import { resolveEmailQueueOptions } from '../../lib/queue/email-queue.options.js';
import { queueConnection, WORKER_CLUSTER_REDIRECTIONS } from '../../lib/queue/queue-connection.helpers.js';
import { checkRedisDurability } from '../../lib/queue/redis-durability.policy.js';
import { replicaCountOf } from '../../lib/queue/redis-replica.helpers.js';
import { ReplicaWaits } from '../../lib/queue/replica-wait.store.js';
import { redisCli, startRedisCluster, type TestRedisCluster } from '../support/redis-cluster.mjs';

// The queue's Redis Cluster foundations on a real cluster (3 masters, 3 replicas), started once for the
// file: the options' prefix rule, the producer and worker connections (BullMQ Queue + Worker process a
// job on them), the worker connection riding out a failover (a master killed, then started again as a
// replica), the durability check over every master, WAIT on the master of a key, and an enqueue
// confirmed on a replica surviving its master's death (last: it kills a master for good). BullMQ is used
// directly here: what EmailQueue makes of these helpers is the queue's own specs' business.

let cluster: TestRedisCluster;
const bulls: Array<{ close(): Promise<void> }> = [];
const clients: Array<Redis | Cluster> = [];

beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);
afterAll(async () => {
  // Closed together, each given 5 s: the last test killed a master for good, and a close that still reaches
  // for it must not hold the file (the connections are cut next, which ends it).
  const bounded = (b: { close(): Promise<void> }) =>
    Promise.race([b.close().catch(() => undefined), new Promise((r) => setTimeout(r, 5000).unref())]);
  await Promise.all(bulls.reverse().map(bounded));
  for (const c of clients) c.disconnect();
  await cluster?.stop();
}, 60_000);

/** Our producer and worker connections on the cluster, closed after the file. */
function connections(connection: Parameters<typeof queueConnection>[0]) {
  const producer = queueConnection(connection, 'producer', 2000);
  const worker = queueConnection(connection, 'worker', 2000);
  clients.push(producer, worker);
  return { producer, worker };
}

/** Resolves once the connection is ready (the producer refuses commands before). */
const ready = (c: Redis | Cluster): Promise<unknown> =>
  c.status === 'ready' ? Promise.resolve() : new Promise((r) => c.once('ready', r));

const optionsError = (fn: () => unknown): EmailOptionsError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof EmailOptionsError) return err;
    throw err;
  }
  throw new Error('no EmailOptionsError');
};

describe('EmailQueueModule options on a Redis Cluster', () => {
  it('refuses a prefix without a hash tag, saying why; tags the default; checks the nodes', () => {
    const nodes = { cluster: cluster.nodes };
    const err = optionsError(() => resolveEmailQueueOptions({ connection: nodes, prefix: 'shop' }));
    expect(err.problems).toEqual([
      'EmailQueueModule: prefix "shop" has no hash tag: on a Redis Cluster every key it starts must live on ' +
        'one slot, which only a tag in braces gives (use e.g. "{shop}")',
    ]);
    expect(resolveEmailQueueOptions({ connection: nodes }).prefix).toBe('{bull}');
    expect(resolveEmailQueueOptions({ connection: nodes, prefix: 'shop:{mail}' }).prefix).toBe('shop:{mail}');
    const client = new Cluster(cluster.nodes, { lazyConnect: true });
    expect(() => resolveEmailQueueOptions({ connection: client, prefix: '{}' })).toThrow(
      'prefix "{}" has no hash tag',
    );
    const fromBull = optionsError(() => resolveEmailQueueOptions({}, { connection: nodes, prefix: 'bull' }));
    expect(fromBull.problems[0]).toContain(`prefix (BullModule.forRoot's) "bull" has no hash tag`);
    const bad = optionsError(() => resolveEmailQueueOptions({ connection: { cluster: [] } }));
    expect(bad.problems).toEqual([
      'EmailQueueModule: connection.cluster must be a non-empty array of nodes { host, port } (got an array of 0)',
    ]);
    // a single Redis keeps any prefix, as before
    expect(resolveEmailQueueOptions({ connection: 'redis://127.0.0.1:1', prefix: 'shop' }).prefix).toBe(
      'shop',
    );
  });
});

describe('keySlot and the hash tag', () => {
  it("gives the server's slot for plain, tagged, empty-tagged and non-ASCII keys", async () => {
    const keys = [
      'email',
      '{email}:queue:1',
      'a{b}c',
      '{}x',
      'x{}{y}',
      '{user1000}.following',
      'café:ümlaut',
      '🐝{🐝}',
    ];
    const node = cluster.nodes[0];
    for (const key of keys) {
      expect(`${key} ${keySlot(key)}`).toBe(`${key} ${await redisCli(node, 'cluster', 'keyslot', key)}`);
    }
    expect(hashTagOf('shop:{mail}:x')).toBe('mail');
    expect(hashTagOf('{}mail')).toBeUndefined();
  });
});

describe('the queue connections on a Redis Cluster', () => {
  it('a BullMQ Queue on the producer and a Worker on the worker connection process a job; its keys share one slot', async () => {
    const { producer, worker } = connections({ cluster: cluster.nodes });
    expect((producer as Cluster).isCluster).toBe(true);
    expect((producer as Cluster).options.enableOfflineQueue).toBe(false);
    expect((worker as Cluster).options.redisOptions?.maxRetriesPerRequest).toBeNull();
    const prefix = '{spec-bull}';
    const queue = new Queue('mail', { connection: producer, prefix });
    const done = new Promise<unknown>((resolve) => {
      const w = new Worker('mail', async (job) => ({ echoed: job.data }), { connection: worker, prefix });
      w.on('completed', (_job, result) => resolve(result));
      bulls.push(w);
    });
    bulls.push(queue);
    await queue.add('send', { to: 'ada@example.com' }, { jobId: 'j1' });
    await expect(done).resolves.toEqual({ echoed: { to: 'ada@example.com' } });
    const owner = await cluster.masterOf(prefix);
    const keys = (await redisCli(owner, 'keys', `${prefix}:mail:*`)).split('\n').filter(Boolean);
    expect(keys).toEqual(expect.arrayContaining([`${prefix}:mail:j1`, `${prefix}:mail:meta`]));
    for (const key of keys) expect(keySlot(key)).toBe(keySlot(prefix));
  }, 30_000);

  it("duplicates the app's ioredis Cluster (never uses it) with the producer's settings", async () => {
    const app = new Cluster(cluster.nodes, { lazyConnect: true, redisOptions: { connectionName: 'app' } });
    clients.push(app);
    const { producer } = connections(app);
    expect(producer).not.toBe(app);
    expect((producer as Cluster).options.redisOptions).toMatchObject({
      connectionName: 'app',
      maxRetriesPerRequest: 1,
      autoResendUnfulfilledCommands: false,
    });
    await ready(producer);
    expect(await producer.ping()).toBe('PONG');
  });
});

describe('the worker connection through a failover', () => {
  // BullMQ's worker sends a job's completion, its lock renewals and its move to delayed on this connection.
  // With ioredis's 16 redirections, a command sent while the master is dead failed "Too many Cluster
  // redirections" before the replica took over, and BullMQ took that for the job's failure: jobs whose email
  // was sent, recorded sent, ended failed in BullMQ (npm run bench:queue-cluster).
  it('answers every command sent while the master of its slot is dead, once a replica takes over', async () => {
    if (cluster.external) return; // killMaster needs a private cluster
    const { producer, worker } = connections({ cluster: cluster.nodes });
    await ready(worker);
    expect((worker as Cluster).options.maxRedirections).toBe(WORKER_CLUSTER_REDIRECTIONS);
    expect((producer as Cluster).options.maxRedirections).toBe(16); // ioredis's: the producer fails fast
    const key = '{spec-failover}:count';
    await worker.set(key, '0');
    const outcomes: Array<Promise<string>> = [];
    let failingOver = true;
    const killing = cluster.killMaster('{spec-failover}').finally(() => (failingOver = false));
    // one command every 50 ms from just before the kill until the cluster is ok again
    while (failingOver) {
      outcomes.push(
        worker.incr(key).then(
          () => 'answered',
          (err: Error) => err.message,
        ),
      );
      await new Promise((r) => setTimeout(r, 50));
    }
    const { killed } = await killing;
    const answers = await Promise.all(outcomes);
    expect(answers.length).toBeGreaterThan(1);
    expect(answers.filter((a) => a !== 'answered')).toEqual([]);
    // back as a replica of the promoted master: every master has a replica again for the tests below
    await cluster.restart(killed);
  }, 90_000);
});

describe('the durability check on a Redis Cluster', () => {
  it('reads every master; one reconfigured without persistence is named', async () => {
    const { producer } = connections({ cluster: cluster.nodes });
    await ready(producer);
    expect(await checkRedisDurability(producer)).toEqual({ problems: [] });
    const [victim] = await cluster.masters();
    await redisCli(victim, 'config', 'set', 'appendonly', 'no');
    await redisCli(victim, 'config', 'set', 'save', '');
    await redisCli(victim, 'config', 'set', 'maxmemory-policy', 'allkeys-lru');
    try {
      const { problems, unchecked } = await checkRedisDurability(producer);
      expect(unchecked).toBeUndefined();
      expect(problems).toEqual([
        `127.0.0.1:${victim.port}: appendonly is "no" and save is empty: a Redis restart loses every queued email (set appendonly yes, or save "60 1000")`,
        `127.0.0.1:${victim.port}: maxmemory-policy is "allkeys-lru": Redis may evict queued emails when memory runs out (set maxmemory-policy noeviction)`,
      ]);
    } finally {
      await redisCli(victim, 'config', 'set', 'maxmemory-policy', 'noeviction');
      await redisCli(victim, 'config', 'set', 'appendonly', 'yes');
    }
    expect(await checkRedisDurability(producer)).toEqual({ problems: [] });
  }, 30_000);
});

describe('WAIT on the master of a key', () => {
  it('adds in flight share WAITs (ReplicaWaits): each is confirmed, with fewer WAITs than adds', async () => {
    const { producer } = connections({ cluster: cluster.nodes });
    await ready(producer);
    const prefix = '{spec-shared}';
    const queue = new Queue('mail', { connection: producer, prefix });
    bulls.push(queue);
    await queue.waitUntilReady();
    const owner = await cluster.masterOf(prefix);
    const waitCalls = async () =>
      Number(/cmdstat_wait:calls=(\d+)/.exec(await redisCli(owner, 'info', 'commandstats'))?.[1] ?? 0);
    const before = await waitCalls();
    const waits = new ReplicaWaits(producer, 2000);
    const acked = await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        await queue.add('send', { i }, { jobId: `s${i}` });
        return waits.confirm(`${prefix}:mail:s${i}`);
      }),
    );
    expect(acked).toEqual(Array.from({ length: 40 }, () => 1));
    const sent = (await waitCalls()) - before;
    expect(sent).toBeGreaterThanOrEqual(1);
    expect(sent).toBeLessThan(40);
  }, 30_000);

  it('confirms an enqueue on its replica; the job survives the death of its master', async () => {
    const { producer } = connections({ cluster: cluster.nodes });
    const prefix = '{spec-wait}';
    const queue = new Queue('mail', { connection: producer, prefix });
    bulls.push(queue);
    await queue.add('send', { n: 1 }, { jobId: 'kept' });
    const key = `${prefix}:mail:kept`;
    expect(await replicaCountOf(producer, key)).toBe(1);
    expect(await new ReplicaWaits(producer, 2000).confirm(key)).toBe(1);
    if (cluster.external) return; // killMaster needs a private cluster
    const { killed, promoted } = await cluster.killMaster(prefix);
    expect(promoted.port).not.toBe(killed.port);
    const { producer: fresh } = connections({ cluster: cluster.nodes });
    const after = new Queue('mail', { connection: fresh, prefix });
    bulls.push(after);
    const job = await after.getJob('kept');
    expect(job?.data).toEqual({ n: 1 });
    // the promoted master has no replica now: WAIT confirms nothing, and says so in time
    await after.add('send', { n: 2 }, { jobId: 'unconfirmed' });
    expect(await replicaCountOf(fresh, key)).toBe(0);
    expect(await new ReplicaWaits(fresh, 200).confirm(key)).toBe(0);
  }, 60_000);
});

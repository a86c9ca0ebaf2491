// What confirming an enqueue on a replica costs on a Redis Cluster (`npm run bench:cluster`): BullMQ
// `Queue.add`s on the queue's producer connection (lib/queue/queue-connection.helpers.ts) to a private
// cluster of 3 masters + 3 replicas (test/support/redis-cluster.mjs; REDIS_CLUSTER_NODES for an existing
// one), CONCURRENCY at a time, in three ways, in alternating rounds (the best round of each is kept):
//   none    the add alone (what an acknowledged enqueue is today);
//   each    every add followed by its own `WAIT 1 <ms>` on the key's master (its connection: writerOf);
//   shared  adds in flight share one WAIT (ReplicaWaits): a WAIT confirms every earlier write of its
//           connection, so an add waits for the first WAIT that starts after its own write was answered.
// Prints one JSON line:
//   { cluster_adds_per_s, cluster_wait_each_adds_per_s, cluster_wait_shared_adds_per_s,
//     wait_each_vs_none, wait_shared_vs_none, unconfirmed, n, concurrency }
// Usage: npm run bench:cluster   (builds dist/ first; BENCH_CLUSTER_N, BENCH_CLUSTER_CONCURRENCY, BENCH_CLUSTER_ROUNDS)
import { Queue } from 'bullmq';
import { queueConnection } from '../../dist/queue/queue-connection.helpers.js';
import { writerOf } from '../../dist/queue/redis-replica.helpers.js';
import { ReplicaWaits } from '../../dist/queue/replica-wait.store.js';
import { startRedisCluster } from '../support/redis-cluster.mjs';
import { failLoudly, requireFigures } from './loud.js';

failLoudly('cluster-wait.bench');

const N = Number(process.env.BENCH_CLUSTER_N ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CLUSTER_CONCURRENCY ?? 32);
const ROUNDS = Number(process.env.BENCH_CLUSTER_ROUNDS ?? 4);
const WAIT_MS = 1000;

const cluster = await startRedisCluster();
const producer = queueConnection({ cluster: cluster.nodes }, 'producer', 5000);
await new Promise((r) => (producer.status === 'ready' ? r(undefined) : producer.once('ready', r)));
const prefix = '{bench-wait}';
const queue = new Queue('mail', { connection: producer, prefix });
await queue.waitUntilReady();
const key = `${prefix}:mail:meta`;
let unconfirmed = 0;

const shared = new ReplicaWaits(producer, WAIT_MS);
/** One `WAIT 1 <ms>` of its own on the connection that wrote `key`: how many replicas acknowledged. */
const waitEach = async (key) => Number(await writerOf(producer, key).call('wait', 1, WAIT_MS));

async function run(mode, round) {
  let i = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (i < N) {
        const n = i++;
        await queue.add(
          'send',
          { to: 'ada@example.com', n },
          { jobId: `${mode}-${round}-${n}`, removeOnComplete: true },
        );
        if (mode === 'none') continue;
        const acked = mode === 'each' ? await waitEach(key) : await shared.confirm(key);
        if (acked < 1) unconfirmed++;
      }
    }),
  );
  return N / ((performance.now() - started) / 1000);
}

const best = { none: 0, each: 0, shared: 0 };
try {
  await run('none', 'warm');
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of ['none', 'each', 'shared']) best[mode] = Math.max(best[mode], await run(mode, round));
    await queue.obliterate({ force: true });
  }
} finally {
  await queue.close();
  producer.disconnect();
  await cluster.stop();
}
const round2 = (x) => Math.round(x * 100) / 100;
const result = {
  cluster_adds_per_s: Math.round(best.none),
  cluster_wait_each_adds_per_s: Math.round(best.each),
  cluster_wait_shared_adds_per_s: Math.round(best.shared),
  wait_each_vs_none: round2(best.each / best.none),
  wait_shared_vs_none: round2(best.shared / best.none),
  unconfirmed,
  n: N,
  concurrency: CONCURRENCY,
};
const measured = ['cluster_adds_per_s', 'wait_each_vs_none', 'wait_shared_vs_none'];
console.log(JSON.stringify(requireFigures(result, measured, 'cluster-wait.bench')));

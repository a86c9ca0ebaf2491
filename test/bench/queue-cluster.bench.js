// EmailQueue jobs/s on one Redis and on a Redis Cluster (3 masters + 3 replicas, test/support/redis-cluster.mjs),
// against the bench's JSON server (bench-server.js, a process of its own). Each run queues N jobs on a
// paused queue (timed: enqueues/s, with the replica's WAIT on the cluster), then resumes it and times the
// drain by a worker app with CONCURRENCY (jobs/s, each job's record confirmed on the replica too):
//   single:     one queue on one redis-server (no persistence, as `npm run bench`'s queue figure)
//   one_shard:  one queue on the cluster, prefix '{bull}' (every key on one slot, so one master)
//   three_shards: three queues whose tags hash to the three masters, drained together in this process
//   failover:   one queue on the cluster, its master SIGKILLed a third of the way through the drain; the
//               longest stretch with no job sent is the dip. A job has ended when its record says so (see
//               drain): failover_jobs_ended_without_event counts those no event reported, and
//               failover_bullmq_failed the jobs BullMQ itself shows failed (a sent job must never be one)
// Prints one JSON line. Usage: npm run bench:queue-cluster   (BENCH_QUEUE_N, BENCH_QUEUE_CONCURRENCY)
// The figures are for this machine only: all worker apps share one Node process.
import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { NestFactory } from '@nestjs/core';
import { EmailModule } from '../../dist/index.js';
import { EmailQueue, EmailQueueModule } from '../../dist/queue/index.js';
import { startRedisCluster } from '../support/redis-cluster.mjs';
import { startRedis } from '../support/redis-server.mjs';
import { failLoudly, requireFigures } from './loud.js';

failLoudly('queue-cluster.bench', 900_000);

const N = Number(process.env.BENCH_QUEUE_N ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_QUEUE_CONCURRENCY ?? 32);
const DRAIN_LIMIT_MS = 120_000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const API_KEY = 'sk_test_bench_key_0123456789';
const input = (i) => ({
  from: 'app@example.com',
  to: ['ada@example.com'],
  subject: `Receipt ${i}`,
  text: 'Thanks',
});

const server = spawn(process.execPath, [fileURLToPath(new URL('./bench-server.js', import.meta.url))], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
const baseUrl = await new Promise((resolve) => {
  server.stdout.setEncoding('utf8');
  server.stdout.once('data', (line) => resolve(`http://127.0.0.1:${JSON.parse(line).port}`));
});

let seq = 0;
/** The 1-minute load average, one decimal. */
const load = () => Math.round(loadavg()[0] * 10) / 10;
async function app(connection, options) {
  return NestFactory.createApplicationContext(
    {
      module: class QueueClusterBench {},
      imports: [
        EmailModule.forRoot({ apiKey: API_KEY, baseUrl, logger: false }),
        EmailQueueModule.forRoot({ connection, ...options }),
      ],
    },
    { logger: false },
  );
}

/** Queues N jobs on a paused queue: the producer app, and enqueues/s. */
async function fill(connection, queueName, prefix) {
  const producer = await app(connection, { queueName, worker: false, ...(prefix ? { prefix } : {}) });
  const queue = producer.get(EmailQueue);
  await queue.bullQueue.waitUntilReady();
  await queue.bullQueue.pause();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 8 }, async (_, lane) => {
      for (let i = lane * 50; i < N; i += 8 * 50) {
        const items = Array.from({ length: Math.min(50, N - i) }, (_, k) => ({
          input: input(i + k),
          options: { jobId: `job-${i + k}` },
        }));
        await queue.sendMany(items);
      }
    }),
  );
  return { producer, queue, enqueuesPerS: N / ((performance.now() - started) / 1000) };
}

/** A job's record says it has ended (the record, not an event, is the job's truth). */
const FINAL = new Set(['sent', 'failed', 'cancelled']);

/**
 * Drains the filled queues together; `during` runs once a third of all jobs have ended. A job has ended
 * when its record says so: the `sent` and `failed` events time the drain, but a job can end without one
 * (an attempt whose email was sent and whose record write landed while its master died cannot emit
 * `sent`; the next run finds the record sent and drops the job quietly). So whenever BullMQ holds no job
 * of the queues to run any more, the records of the jobs no event reported are read: those ended count as
 * ended without an event, those not ended as unfinished. The drain limit is for jobs that never end.
 */
async function drain(connection, queues, during) {
  const workers = [];
  const total = N * queues.length;
  /** Ended jobs ("queue/jobId"): by an event, or found ended by their record. */
  const ended = new Set();
  let sent = 0;
  let failed = 0;
  let withoutEvent = 0;
  const failures = new Set();
  let last = performance.now();
  let longestGap = 0;
  let third;
  const thirdDone = new Promise((r) => (third = r));
  let finish;
  const done = new Promise((r) => (finish = r));
  /** `timed`: reported by an event as it happened (a job found ended by its record says nothing of when). */
  const end = (key, timed = true) => {
    if (ended.has(key)) return false;
    ended.add(key);
    if (timed) {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
    }
    if (ended.size === Math.floor(total / 3)) third();
    if (ended.size === total) finish();
    return true;
  };
  for (const { queueName, prefix } of queues) {
    const worker = await app(connection, {
      queueName,
      concurrency: CONCURRENCY,
      workerOptions: { lockDuration: 5000, stalledInterval: 2000 },
      ...(prefix ? { prefix } : {}),
    });
    worker.get(EmailQueue).on('sent', ({ jobId }) => {
      if (end(`${queueName}/${jobId}`)) sent += 1;
    });
    // a job that ends failed (a failover may end a job in flight uncertain: see docs/scaling.md)
    worker.get(EmailQueue).on('failed', ({ jobId, final, error }) => {
      if (!final || !end(`${queueName}/${jobId}`)) return;
      failed += 1;
      failures.add(`${error.name}: ${error.message.slice(0, 160)}`);
    });
    workers.push(worker);
  }
  /** The jobs no event reported, with their record's state and BullMQ's. */
  const unreported = async () => {
    const rows = [];
    for (const { queueName, queue } of queues) {
      for (let i = 0; i < N; i++) {
        const jobId = `job-${i}`;
        if (ended.has(`${queueName}/${jobId}`)) continue;
        const status = await queue.status(jobId).catch((err) => ({ state: `unreadable: ${err.message}` }));
        rows.push({ key: `${queueName}/${jobId}`, queue, jobId, state: status?.state ?? 'no record' });
      }
    }
    return rows;
  };
  let draining = true;
  const reconcile = (async () => {
    while (draining) {
      await sleep(1000);
      if (!draining) return;
      const counts = await Promise.all(
        queues.map((q) => q.queue.bullQueue.getJobCounts('wait', 'active', 'delayed', 'prioritized')),
      ).catch(() => undefined);
      if (!counts || counts.some((c) => Object.values(c).some((n) => n > 0))) continue;
      for (const row of await unreported()) {
        if (!FINAL.has(row.state) || !end(row.key, false)) continue;
        withoutEvent += 1;
        if (row.state === 'sent') sent += 1;
        else failed += 1;
      }
    }
  })();
  const started = performance.now();
  last = started;
  await Promise.all(queues.map((q) => q.queue.bullQueue.resume()));
  const side = during ? thirdDone.then(during) : Promise.resolve();
  const timedOut = await Promise.race([done.then(() => false), sleep(DRAIN_LIMIT_MS).then(() => true)]);
  draining = false;
  await reconcile;
  if (timedOut) {
    const rows = await unreported();
    const shown = await Promise.all(
      rows.slice(0, 20).map(async ({ key, queue, jobId, state }) => {
        const job = await queue.bullQueue.getJob(jobId).catch(() => undefined);
        const bull = job ? await job.getState().catch((err) => `unreadable: ${err.message}`) : 'none';
        return `${key} record ${state}, BullMQ ${bull}`;
      }),
    );
    throw new Error(
      `drain: ${ended.size} of ${total} ended in ${DRAIN_LIMIT_MS / 1000} s; unfinished: ${shown.join('; ')}`,
    );
  }
  const jobsPerS = total / ((performance.now() - started) / 1000);
  await side;
  // BullMQ's own view of the ended jobs: a job failed there while its record says sent is a lie to dashboards
  const bullFailed = (await Promise.all(queues.map((q) => q.queue.bullQueue.getJobCounts('failed')))).reduce(
    (sum, c) => sum + c.failed,
    0,
  );
  await Promise.all(workers.map((w) => w.close()));
  return {
    jobsPerS,
    longestGapMs: longestGap,
    sent,
    failed,
    withoutEvent,
    bullFailed,
    failures: [...failures],
    load: load(),
  };
}

async function run(connection, tags, during) {
  const queues = [];
  for (const prefix of tags) {
    const queueName = `b${seq++}`;
    queues.push({ queueName, prefix, ...(await fill(connection, queueName, prefix)) });
  }
  const result = await drain(connection, queues, during);
  for (const q of queues) {
    await q.queue.bullQueue.obliterate({ force: true }).catch(() => undefined);
    await q.producer.close();
  }
  return { ...result, enqueuesPerS: Math.min(...queues.map((q) => q.enqueuesPerS)) };
}

const loadAtStart = load();
const redis = await startRedis();
const single = await run(redis.url, [undefined]);
await redis.stop();

const cluster = await startRedisCluster();
const nodes = { cluster: cluster.nodes };
const oneShard = await run(nodes, ['{bull}']);
// three tags, one on each master
const tags = [];
const owners = new Set();
for (let i = 0; tags.length < 3 && i < 100; i++) {
  const owner = await cluster.masterOf(`{mail${i}}`);
  if (owners.has(owner.port)) continue;
  owners.add(owner.port);
  tags.push(`{mail${i}}`);
}
const threeShards = await run(nodes, tags);
// before the failover run, the steady figures (a line of their own, in case the failover run fails)
console.log(
  JSON.stringify({
    steady: true,
    single: single.jobsPerS,
    one_shard: oneShard.jobsPerS,
    three_shards: threeShards.jobsPerS,
  }),
);
let failover;
const failed = await run(nodes, ['{bull}'], async () => {
  const started = performance.now();
  await cluster.killMaster('{bull}');
  failover = { failover_s: Math.round((performance.now() - started) / 100) / 10 };
});
await cluster.stop();
server.kill('SIGTERM');

const r = Math.round;
const result = {
  single_redis_jobs_per_s: r(single.jobsPerS),
  single_redis_enqueues_per_s: r(single.enqueuesPerS),
  one_shard_jobs_per_s: r(oneShard.jobsPerS),
  one_shard_enqueues_per_s: r(oneShard.enqueuesPerS),
  three_shards_jobs_per_s: r(threeShards.jobsPerS),
  three_shards_enqueues_per_s_per_queue: r(threeShards.enqueuesPerS),
  failover_jobs_per_s: r(failed.jobsPerS),
  failover_longest_gap_s: Math.round(failed.longestGapMs / 100) / 10,
  failover_jobs_failed: failed.failed,
  ...(failed.failed > 0 ? { failover_failures: failed.failures } : {}),
  failover_jobs_ended_without_event: failed.withoutEvent,
  failover_bullmq_failed: failed.bullFailed,
  ...failover,
  jobs_per_queue: N,
  concurrency: CONCURRENCY,
  // the 1-minute load average at the start and after each run (single, one shard, three shards, failover)
  load_avg_1m: [loadAtStart, single.load, oneShard.load, threeShards.load, failed.load],
};
const figureNames = ['single_redis_jobs_per_s', 'one_shard_jobs_per_s', 'three_shards_jobs_per_s'];
console.log(JSON.stringify(requireFigures(result, figureNames, 'queue-cluster.bench')));
process.exit(0);

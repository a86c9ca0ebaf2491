// Queue figures for `npm run bench`, run by run.js in a process of its own against the bench server:
// jobs/s through EmailQueue, through a bare BullMQ Worker that calls EmailService.send, and through
// EmailService.send directly, with the same concurrency, the same Redis and the same server, in
// alternating rounds (the best round of each is kept). Each queue run fills a paused queue first, then
// resumes it and times the drain. Prints one JSON line:
//   { queue_jobs_per_s, bare_bullmq_jobs_per_s, direct_jobs_per_s, queue_vs_bare_bullmq, queue_vs_direct, ... }
// Usage: node test/bench/queue.bench.js <baseUrl>   (REDIS_URL to use an existing Redis)
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { EmailModule, EmailService } from '../../dist/index.js';
import { EmailQueue, EmailQueueModule, idempotencyKeyFrom } from '../../dist/queue/index.js';
import { startRedis } from '../support/redis-server.mjs';
import { failLoudly, requireFigures, within } from './loud.js';

failLoudly('queue.bench');
if (!process.argv[2]) throw new Error('usage: node test/bench/queue.bench.js <baseUrl>');

const baseUrl = process.argv[2];
const N = Number(process.env.BENCH_QUEUE_N ?? 3000);
const CONCURRENCY = Number(process.env.BENCH_QUEUE_CONCURRENCY ?? 32);
const ROUNDS = Number(process.env.BENCH_QUEUE_ROUNDS ?? 2);
/** The longest one drain may take before the script gives up (a hang is a failure, not a figure). */
const RUN_LIMIT_MS = Number(process.env.BENCH_QUEUE_LIMIT_MS ?? 120_000);
const API_KEY = 'sk_test_bench_key_0123456789';
const input = (i) => ({
  from: 'app@example.com',
  to: ['ada@example.com'],
  subject: `Receipt ${i}`,
  text: 'Thanks',
});

const redis = await startRedis(); // REDIS_URL, or a private redis-server that answers before we go on
const redisUrl = redis.url;
{
  // BullMQ's connections retry forever: a Redis that does not answer must fail the script, not hang it.
  const probe = new Redis(redisUrl, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  probe.on('error', () => undefined); // the failure is the rejected connect below
  await within(probe.connect(), 10_000, `connecting to Redis at ${redisUrl}`).catch((err) => {
    throw new Error(`Redis at ${redisUrl} does not answer: ${err.message}`);
  });
  await probe.quit();
}

const emailModule = () => EmailModule.forRoot({ apiKey: API_KEY, baseUrl, logger: false });
const direct = await NestFactory.createApplicationContext(emailModule(), { logger: false });
const email = direct.get(EmailService);

async function directRun() {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < N) {
        const i = next++;
        await email.send(input(i), { idempotencyKey: idempotencyKeyFrom('direct', i) });
      }
    }),
  );
  return N / ((performance.now() - started) / 1000);
}

/** Times the drain of N queued jobs once `resume` runs; `done` resolves when all N are sent. */
async function drain(queue, done, side) {
  const started = performance.now();
  const cpu = process.cpuUsage();
  const redisCpu = await redisCpuUs();
  await queue.resume();
  await within(done, RUN_LIMIT_MS, 'a queue drain');
  const used = process.cpuUsage(cpu);
  // This process's CPU per job while it drains (the worker runs here; Redis and the server apart), and Redis's
  // (INFO cpu): steadier than jobs/s on a busy machine.
  cpuPerJob[side].push(Math.round((used.user + used.system) / N));
  redisCpuPerJob[side].push(Math.round(((await redisCpuUs()) - redisCpu) / N));
  return N / ((performance.now() - started) / 1000);
}

/** This process's CPU per job of each side's drains, and Redis's, in µs. */
const cpuPerJob = { bare: [], queue: [] };
const redisCpuPerJob = { bare: [], queue: [] };
const infoClient = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
/** Redis's own CPU so far (user + system), in µs. */
async function redisCpuUs() {
  const info = await infoClient.info('cpu');
  const field = (name) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? 0);
  return (field('used_cpu_user') + field('used_cpu_sys')) * 1e6;
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

let run = 0;
async function bareRun() {
  const name = `bare${run++}`;
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue(name, { connection });
  await queue.pause();
  const opts = { attempts: 8, removeOnComplete: { age: 604800 }, removeOnFail: { age: 2592000 } };
  for (let i = 0; i < N; i += 500) {
    await queue.addBulk(
      Array.from({ length: Math.min(500, N - i) }, (_, k) => {
        const jobId = `job-${i + k}`;
        return {
          name: 'send',
          data: { input: input(i + k), key: idempotencyKeyFrom(name, jobId) },
          opts: { ...opts, jobId },
        };
      }),
    );
  }
  let sent = 0;
  let finish;
  const done = new Promise((r) => (finish = r));
  const worker = new Worker(
    name,
    (job) => email.send(job.data.input, { idempotencyKey: job.data.key, maxRetries: 0 }),
    {
      connection: new Redis(redisUrl, { maxRetriesPerRequest: null }),
      concurrency: CONCURRENCY,
    },
  );
  worker.on('completed', () => ++sent === N && finish());
  worker.on('failed', (job, err) =>
    finish(Promise.reject(new Error(`a bare BullMQ job failed: ${err?.message}`))),
  );
  const rate = await drain(queue, done, 'bare');
  await worker.close();
  await worker.opts.connection.quit();
  await queue.obliterate({ force: true });
  await queue.close();
  await connection.quit();
  return rate;
}

async function queueRun() {
  const queueName = `eq${run++}`;
  const app = await NestFactory.createApplicationContext(
    {
      module: class QueueBench {},
      imports: [emailModule(), EmailQueueModule.forRoot({ connection: redisUrl, queueName, worker: false })],
    },
    { logger: false },
  );
  const producer = app.get(EmailQueue);
  await producer.bullQueue.pause();
  for (let i = 0; i < N; i += 500) {
    await producer.sendMany(
      Array.from({ length: Math.min(500, N - i) }, (_, k) => ({
        input: input(i + k),
        options: { jobId: `job-${i + k}` },
      })),
    );
  }
  const workerApp = await NestFactory.createApplicationContext(
    {
      module: class QueueBenchWorker {},
      imports: [
        emailModule(),
        EmailQueueModule.forRoot({ connection: redisUrl, queueName, concurrency: CONCURRENCY }),
      ],
    },
    { logger: false },
  );
  let sent = 0;
  let finish;
  const done = new Promise((r) => (finish = r));
  workerApp.get(EmailQueue).on('sent', () => ++sent === N && finish());
  workerApp
    .get(EmailQueue)
    .on('failed', (event) =>
      finish(Promise.reject(new Error(`an EmailQueue job failed: ${JSON.stringify(event)}`))),
    );
  const rate = await drain(producer.bullQueue, done, 'queue');
  await workerApp.close();
  await producer.bullQueue.obliterate({ force: true });
  await app.close();
  return rate;
}

const best = { direct: 0, bare: 0, queue: 0 };
await directRun(); // warm-up
for (let r = 0; r < ROUNDS; r++) {
  best.bare = Math.max(best.bare, await bareRun());
  best.queue = Math.max(best.queue, await queueRun());
  best.direct = Math.max(best.direct, await directRun());
}
await direct.close();
infoClient.disconnect();
await redis.stop();
const round2 = (x) => Math.round(x * 100) / 100;
const result = {
  queue_jobs_per_s: Math.round(best.queue),
  bare_bullmq_jobs_per_s: Math.round(best.bare),
  direct_jobs_per_s: Math.round(best.direct),
  queue_vs_bare_bullmq: round2(best.queue / best.bare),
  queue_vs_direct: round2(best.queue / best.direct),
  // The median of each side's drains: the worker process's CPU per job (µs), and the ratio it allows.
  cpu_us_per_job: { queue: median(cpuPerJob.queue), bare_bullmq: median(cpuPerJob.bare) },
  queue_vs_bare_bullmq_by_cpu: round2(median(cpuPerJob.bare) / median(cpuPerJob.queue)),
  redis_cpu_us_per_job: { queue: median(redisCpuPerJob.queue), bare_bullmq: median(redisCpuPerJob.bare) },
  queue_jobs: N,
  queue_concurrency: CONCURRENCY,
  queue_rounds: ROUNDS,
};
const figures = [
  'queue_jobs_per_s',
  'bare_bullmq_jobs_per_s',
  'direct_jobs_per_s',
  'queue_vs_bare_bullmq',
  'queue_vs_direct',
];
console.log(JSON.stringify(requireFigures(result, figures, 'queue.bench')));
process.exit(0);

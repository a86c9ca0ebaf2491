// Queue chaos run: 2,000 jobs through EmailQueue with 3 worker processes on one Redis, against an
// in-process EmailSandbox that injects faults into 20% of requests (every route, every kind: delays,
// 429, 500/502/503, resets before and after processing, failures after processing), while one worker
// process after another is killed with SIGKILL and restarted. Then every job's outcome is checked
// against what the sandbox holds. The last line is one JSON object:
//   { jobs, faults, kills, messages, duplicates, lost, uncertain, ... }   (required: duplicates 0, lost 0, kills >= 3)
// Usage: npm run chaos:queue   (REDIS_URL to use an existing Redis; else a private redis-server is started)
import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { NestFactory } from '@nestjs/core';
import { EmailModule } from '../../dist/index.js';
import { EmailQueue, EmailQueueModule } from '../../dist/queue/index.js';
import { EmailSandbox } from '../../dist/testing/index.js';
import { startRedis } from '../support/redis-server.mjs';

const JOBS = Number(process.argv[2] ?? 2000);
const WORKERS = 3;
const SEED = Number(process.argv[3] ?? 20261123);
const HARD_LIMIT_MS = 300_000;
const KILL_EVERY_MS = 2500;
const MODES = [
  'delay',
  'drop-before',
  'drop-after',
  'fail-after',
  { mode: 'status', status: 429, retryAfter: 1 },
  { mode: 'status', status: 500 },
  { mode: 'status', status: 502 },
  { mode: 'status', status: 503 },
];
const WORKER_SCRIPT = fileURLToPath(new URL('../queue/support/queue-worker.child.mjs', import.meta.url));
const DIST = pathToFileURL(fileURLToPath(new URL('../../dist', import.meta.url))).href;

const children = new Set();
const watchdog = setTimeout(() => {
  console.error(`queue chaos run exceeded ${HARD_LIMIT_MS / 1000} s`);
  for (const c of children) c.kill('SIGKILL');
  process.exit(2);
}, HARD_LIMIT_MS);
watchdog.unref();

const redis = await startRedis(); // REDIS_URL, or a private redis-server that answers before we go on
const redisUrl = redis.url;

const sandbox = await EmailSandbox.start({ maxRequestLog: 10 });
const queueName = `chaos${Date.now()}`;
const env = {
  ...process.env,
  REDIS_URL: redisUrl,
  EMAIL_BASE_URL: sandbox.baseUrl,
  EMAIL_API_KEY: sandbox.apiKey,
  QUEUE_NAME: queueName,
  CONCURRENCY: '16',
  ATTEMPTS: '12',
  WORKER_OPTIONS: JSON.stringify({ lockDuration: 2000, stalledInterval: 1000, maxStalledCount: 20 }),
};
delete env.NODE_OPTIONS;

function startWorker() {
  const child = spawn(process.execPath, [WORKER_SCRIPT, DIST, 'js'], {
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

const producerApp = await NestFactory.createApplicationContext(
  {
    module: class ChaosProducer {},
    imports: [
      EmailModule.forRoot({ apiKey: sandbox.apiKey, baseUrl: sandbox.baseUrl, logger: false }),
      EmailQueueModule.forRoot({ connection: redisUrl, queueName, worker: false }),
    ],
  },
  { logger: false },
);
const queue = producerApp.get(EmailQueue);
let workers = Array.from({ length: WORKERS }, startWorker);

const started = Date.now();
sandbox.faults.random({ probability: 0.2, seed: SEED, modes: MODES });
const ids = Array.from({ length: JOBS }, (_, i) => `chaos-${i}`);
for (let i = 0; i < JOBS; i += 200) {
  await queue.sendMany(
    ids.slice(i, i + 200).map((jobId) => ({
      input: { from: 'shop@example.com', to: ['ada@example.com'], subject: jobId, text: `Job ${jobId}` },
      options: { jobId },
    })),
  );
}

let kills = 0;
const killer = setInterval(() => {
  const victim = workers[kills % WORKERS];
  victim.kill('SIGKILL');
  kills += 1;
  workers = workers.map((w) => (w === victim ? startWorker() : w));
}, KILL_EVERY_MS);

async function finished() {
  const counts = await queue.bullQueue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'paused');
  return Object.values(counts).every((n) => n === 0);
}
while (!(await finished()) || kills < 3) await new Promise((r) => setTimeout(r, 250));
clearInterval(killer);
const elapsedMs = Date.now() - started;

sandbox.faults.random(null);
const bySubject = new Map();
for (const m of sandbox.messages()) bySubject.set(m.subject, (bySubject.get(m.subject) ?? 0) + 1);
let duplicates = 0;
let lost = 0;
let uncertain = 0;
let failed = 0;
for (const jobId of ids) {
  const status = await queue.status(jobId);
  const held = bySubject.get(jobId) ?? 0;
  if (held > 1) duplicates += held - 1;
  if (status?.state === 'sent' && held === 0) lost += 1;
  if (status?.state !== 'sent' && held > 0) lost += 1; // a message whose job failed or vanished
  if (status?.state === 'failed') {
    failed += 1;
    if (status.error?.outcome === 'uncertain') uncertain += 1;
  }
}
for (const subject of bySubject.keys()) if (!ids.includes(subject)) lost += 1;

for (const c of workers) c.kill('SIGTERM');
await Promise.all(workers.map((c) => new Promise((r) => (c.exitCode !== null ? r() : c.once('exit', r)))));
await producerApp.close();
const faults = sandbox.faults.injected;
const messages = sandbox.messages().length;
await sandbox.close();
await redis.stop();

console.log(
  JSON.stringify({
    jobs: JOBS,
    faults,
    kills,
    messages,
    duplicates,
    lost,
    uncertain,
    failed,
    workers: WORKERS,
    elapsed_s: Math.round(elapsedMs / 100) / 10,
  }),
);
process.exit(duplicates === 0 && lost === 0 && kills >= 3 ? 0 : 1);

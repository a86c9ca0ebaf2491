// Queue chaos run: 2,000 jobs through EmailQueue with 3 worker processes on one Redis (AOF, fsync always),
// against an in-process EmailSandbox that injects faults into 20% of requests (every route, every kind:
// delays, 429, 500/502/503, resets before and after processing, failures after processing), while one
// worker process after another is killed with SIGKILL and restarted, and Redis itself is killed and
// restarted on its AOF. The mail looks alike, as transactional mail does: ten subjects in all (one of them
// a saved template's), five recipients, one sender; each email has a body of its own, except pairs of
// jobs queued with identical inputs (two jobs, two emails). Every outcome is then checked BY BODY against
// what the sandbox holds, and every record a job reports is fetched (GET /emails/{id}) to check that it
// carries the job's own body. One job in ten is cancelled at a random moment while the workers run: a cancel
// answered { cancelled: true } must leave the job `cancelled` and its email unsent (counted in cancelled; a
// broken promise counts in cancel_broken). The last line is one JSON object:
//   { jobs, faults, kills, redis_restarts, messages, duplicates, lost, wrong_record, cancelled, ... }
//   required: duplicates 0, lost 0, wrong_record 0, cancel_broken 0, kills >= 3, redis_restarts >= 2
// Usage: npm run chaos:queue   (needs a private redis-server: REDIS_URL cannot be restarted)
//   npm run chaos:queue -- --cluster [jobs] [seed]: the same on a private Redis Cluster (3 masters, 3
//   replicas, test/support/redis-cluster.mjs) with the queue's default prefix '{bull}'. Instead of Redis
//   restarts, the master of the queue's slot is SIGKILLed while jobs are still being queued and sent (its
//   replica takes over), then started again (it rejoins as a replica, so the next kill has one to promote),
//   over and over. Every job whose `sendMany` resolved is listed and checked one by one (acknowledged_lost:
//   an acknowledged job gone or never finished). Required there: failovers >= 1 instead of redis_restarts.
//   EMAIL_RECONCILE=off npm run chaos:queue   runs the workers' EmailModule with reconcile: false, to tell
//   the queue's own outcomes from those of EmailService's look-up after an uncertain send.
import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { NestFactory } from '@nestjs/core';
import { EmailModule, EmailService } from '../../dist/index.js';
import { EmailQueueUnavailableError } from '../../dist/queue/index.js';
import { EmailQueue, EmailQueueModule } from '../../dist/queue/index.js';
import { EmailSandbox } from '../../dist/testing/index.js';
import { startRedisCluster } from '../support/redis-cluster.mjs';
import { startRedis } from '../support/redis-server.mjs';
import { bodyOf, FAULT_MODES, inputOf, TEMPLATE_ID } from './chaos-mail.js';

const CLUSTER = process.argv.includes('--cluster');
const [jobsArg, seedArg] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const JOBS = Number(jobsArg ?? 2000);
const WORKERS = 3;
const SEED = Number(seedArg ?? 20261123);
// A cluster run starts 6 servers and waits for each failover and resync (137 s measured at load 18 on 2
// cores, with 7 failovers): twice the single-Redis run's limit, for a machine busier still.
const HARD_LIMIT_MS = CLUSTER ? 600_000 : 300_000;
const KILL_EVERY_MS = 2500;
const REDIS_RESTART_EVERY_MS = 6000;
/** Cluster: the first master kill comes while jobs are being queued, then one every this long. */
const FIRST_FAILOVER_MS = 1500;
const FAILOVER_EVERY_MS = 12_000;
const PREFIX = '{bull}';
const WORKER_SCRIPT = fileURLToPath(new URL('../queue/support/queue-worker.child.mjs', import.meta.url));
const DIST = pathToFileURL(fileURLToPath(new URL('../../dist', import.meta.url))).href;

const children = new Set();
const watchdog = setTimeout(() => {
  console.error(`queue chaos run exceeded ${HARD_LIMIT_MS / 1000} s`);
  for (const c of children) c.kill('SIGKILL');
  process.exit(2);
}, HARD_LIMIT_MS);
watchdog.unref();

// A private redis-server that can be restarted on its AOF, or a private cluster whose masters can be killed.
const redis = CLUSTER ? undefined : await startRedis({ aof: true });
const cluster = CLUSTER ? await startRedisCluster() : undefined;
const connection = cluster ? { cluster: cluster.nodes } : redis.url;
const redisEnv = cluster
  ? { REDIS_CLUSTER_NODES: cluster.nodes.map((n) => `${n.host}:${n.port}`).join(',') }
  : { REDIS_URL: redis.url };

const sandbox = await EmailSandbox.start({
  maxRequestLog: 10,
  templates: { [TEMPLATE_ID]: { subject: 'Your sign-in link', text: 'Sign in, {{name}}: {{code}}' } },
});
const queueName = `chaos${Date.now()}`;
const env = {
  ...process.env,
  ...redisEnv,
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
      EmailQueueModule.forRoot({ connection, queueName, worker: false, enqueueTimeoutMs: 5000 }),
    ],
  },
  { logger: false },
);
const queue = producerApp.get(EmailQueue);
const email = producerApp.get(EmailService);
let workers = Array.from({ length: WORKERS }, startWorker);

const ids = Array.from({ length: JOBS }, (_, i) => `chaos-${i}`);
const run = randomUUID().slice(0, 8);
const started = Date.now();
sandbox.faults.random({ probability: 0.2, seed: SEED, modes: FAULT_MODES });

let redisRestarts = 0;
let failovers = 0;
let faultsOn = true;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** Redis restarts (single Redis) or master kills (cluster), one after the other until told to stop. */
async function redisFaults() {
  await sleep(CLUSTER ? FIRST_FAILOVER_MS : REDIS_RESTART_EVERY_MS);
  while (faultsOn) {
    if (cluster) {
      const { killed } = await cluster.killMaster(PREFIX); // SIGKILL; returns once its replica took over
      failovers += 1;
      await cluster.restart(killed); // back as a replica of the new master, in sync
    } else {
      await redis.restart(); // SIGKILL, then the same port and AOF
      redisRestarts += 1;
    }
    await sleep(CLUSTER ? FAILOVER_EVERY_MS : REDIS_RESTART_EVERY_MS);
  }
}

/** Redis may be restarting: retry with the same job ids (one job id is one email, whatever happened). */
async function retrying(what) {
  for (;;) {
    try {
      return await what();
    } catch (err) {
      const message = String(err?.message);
      if (!(err instanceof EmailQueueUnavailableError) && !/Redis|Cluster|Connection/i.test(message))
        throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}
// Cancels racing the workers: one job in ten, at a random moment in the first seconds after it is queued.
const cancelAnswers = new Map(); // index -> cancel's answer
const cancelling = [];
const acknowledged = []; // every job id whose sendMany resolved, in order
const BATCH = CLUSTER ? 20 : 200; // on a cluster, queueing goes on while the first master dies
async function enqueueAll() {
  for (let i = 0; i < JOBS; i += BATCH) {
    const batch = ids
      .slice(i, i + BATCH)
      .map((jobId, k) => ({ input: inputOf(run, i + k), options: { jobId } }));
    await retrying(() => queue.sendMany(batch));
    acknowledged.push(...batch.map((b) => b.options.jobId));
    for (let c = i - (i % 10); c < i + batch.length; c += 10) {
      const index = c + Math.floor(Math.random() * 10);
      if (index < i || index >= i + batch.length) continue;
      cancelling.push(
        sleep(Math.random() * 3000)
          .then(() => retrying(() => queue.cancel(ids[index])))
          .then((answer) => cancelAnswers.set(index, answer)),
      );
    }
    if (CLUSTER) await sleep(25);
  }
}
const enqueueing = enqueueAll();
if (!CLUSTER) await enqueueing;
const faulting = redisFaults();
faulting.catch(() => undefined); // awaited (and so thrown) at the end

let kills = 0;
const killer = setInterval(() => {
  const victim = workers[kills % WORKERS];
  victim.kill('SIGKILL');
  kills += 1;
  workers = workers.map((w) => (w === victim ? startWorker() : w));
}, KILL_EVERY_MS);

async function finished() {
  const counts = await queue.bullQueue
    .getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'paused')
    .catch(() => ({ unknown: 1 }));
  return Object.values(counts).every((n) => n === 0);
}
await enqueueing;
await Promise.all(cancelling);
const enoughFaults = () => (CLUSTER ? failovers >= 1 : redisRestarts >= 2);
while (!(await finished()) || kills < 3 || !enoughFaults()) await sleep(250);
clearInterval(killer);
faultsOn = false;
await faulting;
while (!(await finished())) await new Promise((r) => setTimeout(r, 250));
const elapsedMs = Date.now() - started;

sandbox.faults.random(null);
const held = new Map(); // body -> messages the sandbox holds with it
for (const m of sandbox.messages()) held.set(m.bodyText, (held.get(m.bodyText) ?? 0) + 1);
const groups = new Map(); // body -> { sent, uncertain, other }
const statuses = [];
let cancelled = 0;
// A cancel answered true (or, when a first try failed and was retried, `state: 'cancelled'`: the first one
// did it) whose job is not cancelled, or answered otherwise for a job that is.
let cancelBroken = 0;
const brokenCancels = { said_cancelled_not_cancelled: [], said_not_cancelled_but_cancelled: [] };
for (let i = 0; i < JOBS; i += 1) {
  const status = await retrying(() => queue.status(ids[i]));
  statuses.push(status);
  const g = groups.get(bodyOf(run, i)) ?? { sent: 0, uncertain: 0, other: 0 };
  const answer = cancelAnswers.get(i);
  const saidCancelled = answer?.cancelled === true || answer?.state === 'cancelled';
  if (saidCancelled) cancelled += 1;
  if (saidCancelled !== (status?.state === 'cancelled')) {
    cancelBroken += 1;
    const list = saidCancelled
      ? brokenCancels.said_cancelled_not_cancelled
      : brokenCancels.said_not_cancelled_but_cancelled;
    list.push(`${ids[i]}: ${JSON.stringify(answer)} -> ${status?.state}`);
  }
  if (status?.state === 'cancelled') {
    groups.set(bodyOf(run, i), g); // its body must then have no email beyond its group's others
    continue;
  }
  if (status?.state === 'sent') g.sent += 1;
  else if (status?.state === 'failed' && status.error?.outcome === 'uncertain') g.uncertain += 1;
  else g.other += 1;
  groups.set(bodyOf(run, i), g);
}
// Each acknowledged job, one by one: it must have ended (sent, cancelled, or failed saying it may be sent).
let acknowledgedLost = 0;
for (const jobId of acknowledged) {
  const status = statuses[ids.indexOf(jobId)];
  const ended =
    status?.state === 'sent' ||
    status?.state === 'cancelled' ||
    (status?.state === 'failed' && status.error?.outcome === 'uncertain');
  if (!ended) acknowledgedLost += 1;
}
let duplicates = 0;
let lost = 0;
let uncertain = 0;
let failed = 0;
for (const [body, g] of groups) {
  const n = held.get(body) ?? 0;
  if (n > g.sent + g.uncertain) duplicates += n - (g.sent + g.uncertain); // more emails than jobs
  if (n < g.sent) lost += g.sent - n; // a job reported sent whose email is not there
  lost += g.other; // a job that vanished, or failed saying nothing was sent
  uncertain += g.uncertain;
  failed += g.uncertain + g.other;
}
for (const body of held.keys()) if (!groups.has(body)) lost += 1; // an email no job asked for
// Every record a job reports must be its own message: fetched over HTTP, it carries the job's body.
let wrongRecord = 0;
const seen = new Set();
for (let i = 0; i < JOBS; i += 20) {
  await Promise.all(
    statuses.slice(i, i + 20).map(async (status, k) => {
      if (status?.state !== 'sent') return;
      const id = status.record?.id;
      if (id === undefined || seen.has(id)) return void (wrongRecord += 1);
      seen.add(id);
      const detail = await email.get(id);
      if (detail.bodyText !== bodyOf(run, i + k)) wrongRecord += 1;
    }),
  );
}

for (const c of workers) c.kill('SIGTERM');
await Promise.all(workers.map((c) => new Promise((r) => (c.exitCode !== null ? r() : c.once('exit', r)))));
await producerApp.close();
const faults = sandbox.faults.injected;
const messages = sandbox.messages().length;
await sandbox.close();
await redis?.stop();
await cluster?.stop();

console.log(
  JSON.stringify({
    jobs: JOBS,
    faults,
    kills,
    messages,
    ...(CLUSTER ? { redis: 'cluster 3+3', failovers } : { redis_restarts: redisRestarts }),
    acknowledged: acknowledged.length,
    acknowledged_lost: acknowledgedLost,
    service_reconcile: process.env.EMAIL_RECONCILE === 'off' ? 'off' : 'on',
    duplicates,
    lost,
    wrong_record: wrongRecord,
    cancelled,
    cancel_broken: cancelBroken,
    ...(cancelBroken > 0 ? { broken_cancels: brokenCancels } : {}),
    uncertain,
    failed,
    workers: WORKERS,
    elapsed_s: Math.round(elapsedMs / 100) / 10,
  }),
);
const broken = [
  ...Object.entries({
    duplicates,
    lost,
    wrong_record: wrongRecord,
    cancel_broken: cancelBroken,
    acknowledged_lost: acknowledgedLost,
  })
    .filter(([, n]) => n !== 0)
    .map(([name, n]) => `${name} ${n} (must be 0)`),
  ...(acknowledged.length === JOBS
    ? []
    : [`acknowledged ${acknowledged.length} of ${JOBS} (every send must resolve)`]),
  ...(kills >= 3 ? [] : [`kills ${kills} (at least 3 for a measurement)`]),
  ...(enoughFaults()
    ? []
    : [CLUSTER ? `failovers ${failovers} (at least 1)` : `redis_restarts ${redisRestarts} (at least 2)`]),
];
if (broken.length > 0) console.error(`queue chaos: FAILED: ${broken.join(', ')}`);
process.exit(broken.length === 0 ? 0 : 1);

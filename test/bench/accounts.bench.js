// `npm run bench:accounts`: many accounts in one app, fairness under a flood.
// Three worker processes (accounts-worker.child.mjs on dist/) share one queue and one Redis. The sandbox (this
// process) has one mailbox per account, each with a recipient quota equal to the account's budget, so a
// budget that does not hold draws 429s. One account ("flood") queues 10,000 emails at once; 49 small accounts
// each queue emails at half their budget's rate (light traffic: an account offered at exactly its budget has
// a queue that grows without end, whatever the scheduler) for the whole run. Figures (JSON line):
//   min_share      the lowest, over every account with work, of recipients accepted in the run over what the
//                  account could use of its budget in that time: its whole budget for the flood (a backlog all
//                  along), what it queued for a small account (target >= 0.9)
//   flood_share, small_share_min, small_share_mean
//   rate_limited   429s the sandbox's quotas answered (target 0)
//   budget_waits   jobs given back for later (the account paused or its budget without room), no attempt spent
//   small_wait_p50_ms, small_wait_p99_ms   queued-to-accepted time of the small accounts' emails while the
//                  flood runs (target p99 < 2000)
//   flood_sent, failed
//   churn_*        the churn run (accounts-churn.js): 50,000 accounts seen once each over a minute with a
//                  short TTL; churn_heap_growth_mb, the heap after the run less before it (target < 10)
// Knobs (environment): BENCH_ACCOUNTS_SECONDS (20), BENCH_ACCOUNTS_FLOOD (10,000), BENCH_ACCOUNTS_FLOOD_R
// (100 recipients/s), BENCH_ACCOUNTS_SMALL (49), BENCH_ACCOUNTS_SMALL_R (4 recipients/s),
// BENCH_ACCOUNTS_SMALL_LOAD (0.5: the share of its budget a small account queues).
import 'reflect-metadata';
import { fork } from 'node:child_process';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NestFactory } from '@nestjs/core';
import { EmailModule } from '../../dist/index.js';
import { EmailQueue, EmailQueueModule } from '../../dist/queue/index.js';
import { EmailSandbox } from '../../dist/testing/index.js';
import { startRedis } from '../support/redis-server.mjs';
import { failLoudly, requireFigures, within } from './loud.js';
import { churnRun } from './accounts-churn.js';

failLoudly('accounts.bench', 600_000);

// The churn run first, on a fresh heap: 50,000 accounts seen once each (see accounts-churn.js).
const CHURN_FIGURES = ['churn_heap_growth_mb', 'churn_held_after', 'churn_failed'];
const churn = requireFigures(await churnRun(), CHURN_FIGURES, 'accounts.bench (churn)');
console.log(
  `accounts churn: ${churn.churn_accounts} accounts over ${churn.churn_seconds} s (TTL ${churn.churn_ttl_ms} ms): ` +
    `heap ${churn.churn_heap_start_mb} -> peak ${churn.churn_heap_peak_mb} -> ${churn.churn_heap_end_mb} MB ` +
    `(growth ${churn.churn_heap_growth_mb} MB), held after ${churn.churn_held_after}, load ${loadavg()[0].toFixed(2)}`,
);
if (process.env.BENCH_ACCOUNTS_ONLY === 'churn') {
  console.log(JSON.stringify({ bench: 'accounts', ...churn, load_1m: Number(loadavg()[0].toFixed(2)) }));
  process.exit(0);
}

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SECONDS = Number(process.env.BENCH_ACCOUNTS_SECONDS ?? 20);
const FLOOD = Number(process.env.BENCH_ACCOUNTS_FLOOD ?? 10_000);
const FLOOD_R = Number(process.env.BENCH_ACCOUNTS_FLOOD_R ?? 100);
const SMALL = Number(process.env.BENCH_ACCOUNTS_SMALL ?? 49);
const SMALL_R = Number(process.env.BENCH_ACCOUNTS_SMALL_R ?? 4);
const SMALL_LOAD = Number(process.env.BENCH_ACCOUNTS_SMALL_LOAD ?? 0.5);
const PROCESSES = 3;
const QUEUE_NAME = `accounts-bench-${process.pid}`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

const redis = await startRedis();
const sandbox = await EmailSandbox.start({ maxRequestLog: 10 });
const workers = [];
let producer;
try {
  const budget = (r) => ({ recipients: { limit: r, intervalMs: 1000 } });
  const boxes = { flood: sandbox.mailbox({ name: 'flood', quota: { recipients: FLOOD_R, windowMs: 1000 } }) };
  for (let i = 0; i < SMALL; i++)
    boxes[`small-${i}`] = sandbox.mailbox({
      name: `small-${i}`,
      quota: { recipients: SMALL_R, windowMs: 1000 },
    });
  const table = Object.fromEntries(
    Object.entries(boxes).map(([id, box]) => [
      id,
      { apiKey: box.apiKey, rateLimit: budget(id === 'flood' ? FLOOD_R : SMALL_R) },
    ]),
  );

  const env = {
    ...process.env,
    ACCOUNTS: JSON.stringify(table),
    EMAIL_BASE_URL: sandbox.baseUrl,
    REDIS_URL: redis.url,
    QUEUE_NAME,
    CONCURRENCY: '16',
  };
  for (let p = 0; p < PROCESSES; p++) {
    const child = fork(join(ROOT, 'test/bench/accounts-worker.child.mjs'), [], {
      cwd: ROOT,
      env,
      stdio: 'inherit',
    });
    const ready = new Promise((resolve, reject) => {
      child.once('message', (m) => (m?.ready ? resolve() : reject(new Error('worker did not start'))));
      child.once('exit', (code) => reject(new Error(`worker exited ${code} before it was ready`)));
    });
    workers.push({ child, ready });
  }
  await within(Promise.all(workers.map((w) => w.ready)), 60_000, 'the worker processes');

  producer = await NestFactory.createApplicationContext(
    {
      module: class AccountsBenchProducer {},
      imports: [
        EmailModule.forRoot({
          baseUrl: sandbox.baseUrl,
          accounts: (id) => table[id] ?? null,
          rateLimit: { redis: redis.url, prefix: 'bench-accounts' },
          logger: false,
        }),
        EmailQueueModule.forRoot({ connection: redis.url, queueName: QUEUE_NAME, worker: false }),
      ],
    },
    { logger: false },
  );
  const queue = producer.get(EmailQueue);
  const mail = (account, n) => ({
    from: 'shop@example.com',
    to: ['ada@example.org'],
    subject: 'Your order',
    text: `${account} ${n} queued=${Date.now()}`,
  });

  const t0 = Date.now();
  // The flood: 10,000 emails of one account, queued at once.
  for (let i = 0; i < FLOOD; i += 500) {
    const n = Math.min(500, FLOOD - i);
    await queue.sendMany(
      Array.from({ length: n }, (_, k) => ({ input: mail('flood', i + k), options: { account: 'flood' } })),
    );
  }
  // The small accounts: each at SMALL_LOAD of its budget's rate, for the whole run.
  const tEnd = t0 + SECONDS * 1000;
  const every = 1000 / (SMALL_R * SMALL_LOAD);
  let queuedSmall = 0;
  const queuedBy = {};
  const ticks = [];
  for (let s = 0; s < SMALL; s++) {
    const id = `small-${s}`;
    ticks.push(
      (async () => {
        await sleep(Math.floor((s / SMALL) * 1000)); // spread over the second
        for (let n = 0; Date.now() < tEnd; n++) {
          const next = t0 + (s / SMALL) * 1000 + n * every;
          if (next > Date.now()) await sleep(next - Date.now());
          if (Date.now() >= tEnd) break;
          await queue.send(mail(id, n), { account: id });
          queuedSmall++;
          queuedBy[id] = (queuedBy[id] ?? 0) + 1;
        }
      })(),
    );
  }
  await Promise.all(ticks);
  // let the last small emails go out (they are measured for their wait, not for the share)
  await sleep(3_000);

  const tally = { rateLimited: 0, failed: 0, sent: 0 };
  await within(
    Promise.all(
      workers.map(
        ({ child }) =>
          new Promise((resolve, reject) => {
            if (child.exitCode !== null)
              return reject(new Error(`a worker process exited (${child.exitCode}) during the run`));
            child.once('exit', (code) =>
              reject(new Error(`a worker process exited (${code}) before its tally`)),
            );
            child.on('message', (m) => {
              if (m?.tally) {
                for (const k of Object.keys(tally)) tally[k] += m.tally[k];
                resolve();
              }
            });
            child.send('stop');
          }),
      ),
    ),
    30_000,
    "the worker processes' tallies",
  );

  const waits = [];
  const shares = {};
  let smallSent = 0;
  for (const [id, box] of Object.entries(boxes)) {
    const msgs = box.messages();
    if (id === 'flood') {
      shares[id] = msgs.filter((m) => Date.parse(m.createdAt) < tEnd).length / (FLOOD_R * SECONDS);
      continue;
    }
    // a small account's share: its emails accepted over those it queued (each within the run and its grace)
    shares[id] = msgs.length / Math.max(1, queuedBy[id] ?? 0);
    smallSent += msgs.length;
    for (const m of msgs) {
      const queued = Number(/queued=(\d+)/.exec(m.bodyText ?? '')?.[1]);
      waits.push(Date.parse(m.createdAt) - queued);
    }
  }
  const small = Object.entries(shares)
    .filter(([id]) => id !== 'flood')
    .map(([, v]) => v);
  const result = requireFigures(
    {
      bench: 'accounts',
      seconds: SECONDS,
      flood_budget: FLOOD_R,
      small_budget: SMALL_R,
      small_load: SMALL_LOAD,
      accounts: SMALL + 1,
      processes: PROCESSES,
      min_share: Math.min(shares.flood, ...small),
      flood_share: shares.flood,
      small_share_min: Math.min(...small),
      small_share_mean: small.reduce((a, b) => a + b, 0) / small.length,
      rate_limited: Object.values(boxes).reduce((n, box) => n + box.limited().quota, 0),
      budget_waits: tally.rateLimited,
      failed: tally.failed,
      small_queued: queuedSmall,
      small_sent: smallSent,
      small_wait_p50_ms: quantile(waits, 0.5),
      small_wait_p99_ms: quantile(waits, 0.99),
      flood_sent: boxes.flood.messages().length,
      ...churn,
      load_1m: Number(loadavg()[0].toFixed(2)),
    },
    ['min_share', 'rate_limited', 'small_wait_p99_ms', 'small_share_min'],
    'accounts.bench',
  );
  console.log(
    `accounts: min share ${result.min_share.toFixed(3)} (flood ${result.flood_share.toFixed(3)}, small min ${result.small_share_min.toFixed(3)}), ` +
      `429s ${result.rate_limited}, small wait p50 ${result.small_wait_p50_ms} ms p99 ${result.small_wait_p99_ms} ms, load ${result.load_1m}`,
  );
  console.log(JSON.stringify(result));
} finally {
  for (const { child } of workers) if (child.exitCode === null) child.kill('SIGKILL');
  await producer?.close();
  await sandbox.close();
  await redis.stop();
}
process.exit(0);

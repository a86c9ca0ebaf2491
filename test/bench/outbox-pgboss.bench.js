// Outbox figures for `npm run bench`, run by run.js in a process of its own against the bench server:
// - jobs/s through EmailOutbox (its pg-boss worker running the shared job routine) against a bare pg-boss
//   worker that calls EmailService.send, with the same concurrency, the same PostgreSQL and the same server,
//   in alternating rounds (the best round of each kept). Each run starts its workers on an empty queue, then
//   commits all N jobs in one transaction and times from the commit to the last email sent;
// - the commit-to-sent latency (p50, p99) at the default settings: one email per transaction, one at a time
//   with a pause between them, from COMMIT to the worker's `sent` event.
// Prints one JSON line:
//   { outbox_jobs_per_s, bare_pgboss_jobs_per_s, outbox_vs_bare_pgboss, commit_to_sent_p50_ms, commit_to_sent_p99_ms, ... }
// Usage: node test/bench/outbox-pgboss.bench.js <baseUrl>   (DATABASE_URL to use an existing PostgreSQL)
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import pg from 'pg';
import PgBoss from 'pg-boss';
import { EmailModule, EmailService } from '../../dist/index.js';
import { EmailOutbox, EmailOutboxModule, idempotencyKeyFrom } from '../../dist/outbox/index.js';
import { startPostgres } from '../support/postgres-server.mjs';

const baseUrl = process.argv[2];
const N = Number(process.env.BENCH_OUTBOX_N ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_OUTBOX_CONCURRENCY ?? 10);
const ROUNDS = Number(process.env.BENCH_OUTBOX_ROUNDS ?? 2);
const LATENCY_SAMPLES = Number(process.env.BENCH_OUTBOX_LATENCY_N ?? 100);
const API_KEY = 'sk_test_bench_key_0123456789';
const input = (i) => ({
  from: 'app@example.com',
  to: ['ada@example.com'],
  subject: `Receipt ${i}`,
  text: 'Thanks',
});

const postgres = await startPostgres();
const pool = new pg.Pool({ connectionString: postgres.url, max: 4 });
const emailModule = () => EmailModule.forRoot({ apiKey: API_KEY, baseUrl, logger: false });
let runNo = 0;

async function outboxApp(options) {
  return NestFactory.createApplicationContext(
    { module: class OutboxBench {}, imports: [emailModule(), EmailOutboxModule.forRoot(options)] },
    { logger: false },
  );
}

/** N jobs committed in one transaction into a running EmailOutbox worker; jobs/s from the commit to the last sent. */
async function outboxRun() {
  const schema = `bench_outbox_${++runNo}`;
  const app = await outboxApp({ connection: postgres.url, schema, concurrency: CONCURRENCY });
  const outbox = app.get(EmailOutbox);
  let sent = 0;
  let resolveDone;
  const done = new Promise((r) => (resolveDone = r));
  outbox.on('sent', () => ++sent === N && resolveDone());
  const client = await pool.connect();
  await client.query('BEGIN');
  await outbox.sendMany(
    Array.from({ length: N }, (_, i) => ({ input: input(i), options: { jobId: `o${runNo}-${i}` } })),
    { tx: client },
  );
  await client.query('COMMIT');
  client.release();
  const started = performance.now();
  await done;
  const ms = performance.now() - started;
  await app.close();
  return Math.round((N / ms) * 1000);
}

/** The same through a bare pg-boss worker (CONCURRENCY `work` loops) that calls EmailService.send. */
async function barePgBossRun() {
  const schema = `bench_bare_${++runNo}`;
  const app = await NestFactory.createApplicationContext(emailModule(), { logger: false });
  const email = app.get(EmailService);
  const boss = new PgBoss({ connectionString: postgres.url, schema, max: CONCURRENCY + 4 });
  boss.on('error', () => undefined);
  await boss.start();
  await boss.createQueue('email', { name: 'email', policy: 'standard' });
  let sent = 0;
  let resolveDone;
  const done = new Promise((r) => (resolveDone = r));
  for (let w = 0; w < CONCURRENCY; w++) {
    // The same fetch loop as EmailOutbox's: after a job, fetch the next at once (notifyWorker).
    let id;
    id = await boss.work('email', { batchSize: 1, pollingIntervalSeconds: 0.5 }, async ([job]) => {
      try {
        await email.send(job.data.input, { idempotencyKey: job.data.key, maxRetries: 0, reconcile: false });
        if (++sent === N) resolveDone();
      } finally {
        if (id) boss.notifyWorker(id);
      }
    });
  }
  const jobs = Array.from({ length: N }, (_, i) => ({
    name: 'email',
    data: { input: input(i), key: idempotencyKeyFrom('bare', runNo, i) },
    retryLimit: 7,
  }));
  await boss.insert(jobs);
  const started = performance.now();
  await done;
  const ms = performance.now() - started;
  await boss.stop({ graceful: true, wait: true, timeout: 5000 });
  await app.close();
  return Math.round((N / ms) * 1000);
}

/** Commit-to-sent latency at the default settings, one email at a time. */
async function latency() {
  const app = await outboxApp({ connection: postgres.url, schema: 'bench_latency' });
  const outbox = app.get(EmailOutbox);
  const waiting = new Map();
  outbox.on('sent', ({ jobId }) => waiting.get(jobId)?.(performance.now()));
  const samples = [];
  for (let i = 0; i < LATENCY_SAMPLES; i++) {
    const jobId = `lat-${i}`;
    const sentAt = new Promise((r) => waiting.set(jobId, r));
    const client = await pool.connect();
    await client.query('BEGIN');
    await outbox.send(input(i), { tx: client, jobId });
    await client.query('COMMIT');
    const committedAt = performance.now();
    client.release();
    samples.push((await sentAt) - committedAt);
    await new Promise((r) => setTimeout(r, 37 + (i % 7) * 29)); // out of step with the polling
  }
  await app.close();
  samples.sort((a, b) => a - b);
  const at = (q) => Math.round(samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]);
  return { p50: at(0.5), p99: at(0.99) };
}

const outboxRuns = [];
const bareRuns = [];
for (let r = 0; r < ROUNDS; r++) {
  bareRuns.push(await barePgBossRun());
  outboxRuns.push(await outboxRun());
}
const lat = await latency();
await pool.end();
await postgres.stop();
const outboxBest = Math.max(...outboxRuns);
const bareBest = Math.max(...bareRuns);
console.log(
  JSON.stringify({
    outbox_jobs_per_s: outboxBest,
    bare_pgboss_jobs_per_s: bareBest,
    outbox_vs_bare_pgboss: Math.round((outboxBest / bareBest) * 100) / 100,
    commit_to_sent_p50_ms: lat.p50,
    commit_to_sent_p99_ms: lat.p99,
    rounds: { outbox: outboxRuns, bare_pgboss: bareRuns },
    jobs: N,
    concurrency: CONCURRENCY,
    latency_samples: LATENCY_SAMPLES,
    pg_boss: 'pg-boss 10 (the devDependency), polling 0.5 s, one job per fetch',
  }),
);
process.exit(0);

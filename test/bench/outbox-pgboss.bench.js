// Outbox figures for `npm run bench`, run by run.js in a process of its own against the bench server:
// - jobs/s through EmailOutbox (its pg-boss worker running the shared job routine) against the best bare
//   pg-boss worker we know that calls EmailService.send (batch fetch, batch complete, no poll while there
//   are jobs; see `bareWorker`), with the same concurrency, the same PostgreSQL and the same server,
//   in alternating rounds (the best round of each kept), after one warm-up round of each that is reported
//   apart (`warmup`) and never kept: a worker runs for hours, and V8 compiles the hot code of both sides
//   (pg, pg-boss, undici, the job layer) during their first thousands of jobs. Each run starts its workers on an empty queue, then
//   commits all N jobs in one transaction and times from the commit to the last email sent. Each run is a new
//   schema: tables never analyzed, as in a queue's first minute (the outbox analyzes its queue's table once
//   then, pg-boss does not). Beside it, a second anchor never used for the target: the same bare worker on a
//   pg-boss given what the outbox gives its queue (the fetch-order index and statistics), which leaves what
//   the job layer itself costs (`outbox_vs_bare_pgboss_tuned`);
// - the commit-to-sent latency (p50, p99) at the default settings: one email per transaction, one at a time
//   with a pause between them, from COMMIT to the worker's `sent` event.
// Prints one JSON line:
//   { outbox_jobs_per_s, bare_pgboss_jobs_per_s, outbox_vs_bare_pgboss, outbox_vs_bare_pgboss_tuned,
//     commit_to_sent_p50_ms, commit_to_sent_p99_ms, ... }
// Usage: node test/bench/outbox-pgboss.bench.js <baseUrl>   (DATABASE_URL to use an existing PostgreSQL)
import 'reflect-metadata';
import { loadavg } from 'node:os';
import { NestFactory } from '@nestjs/core';
import pg from 'pg';
import PgBoss from 'pg-boss';
import { EmailModule, EmailService } from '../../dist/index.js';
import { EmailOutbox, EmailOutboxModule, idempotencyKeyFrom } from '../../dist/outbox/index.js';
import { outboxSql } from '../../dist/outbox/outbox-sql.helpers.js';
import { startPostgres } from '../support/postgres-server.mjs';
import { bareWorker } from './bare-pgboss.js';
import { failLoudly, requireFigures, within } from './loud.js';

failLoudly('outbox-pgboss.bench');
if (!process.argv[2]) throw new Error('usage: node test/bench/outbox-pgboss.bench.js <baseUrl>');

const baseUrl = process.argv[2];
const N = Number(process.env.BENCH_OUTBOX_N ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_OUTBOX_CONCURRENCY ?? 10);
const ROUNDS = Number(process.env.BENCH_OUTBOX_ROUNDS ?? 2);
const LATENCY_SAMPLES = Number(process.env.BENCH_OUTBOX_LATENCY_N ?? 100);
/** The longest one run may take before the script gives up (a hang is a failure, not a figure). */
const RUN_LIMIT_MS = Number(process.env.BENCH_OUTBOX_LIMIT_MS ?? 120_000);
const API_KEY = 'sk_test_bench_key_0123456789';
const input = (i) => ({
  from: 'app@example.com',
  to: ['ada@example.com'],
  subject: `Receipt ${i}`,
  text: 'Thanks',
});

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
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
  outbox.on('failed', (event) =>
    resolveDone(Promise.reject(new Error(`an outbox job failed: ${JSON.stringify(event)}`))),
  );
  const client = await pool.connect();
  await client.query('BEGIN');
  await outbox.sendMany(
    Array.from({ length: N }, (_, i) => ({ input: input(i), options: { jobId: `o${runNo}-${i}` } })),
    { tx: client },
  );
  await client.query('COMMIT');
  client.release();
  const started = performance.now();
  const cpu = process.cpuUsage();
  await within(done, RUN_LIMIT_MS, `the EmailOutbox run (${sent} of ${N} sent)`);
  const ms = performance.now() - started;
  cpuPerJob.outbox.push(cpuUsPerJob(cpu));
  await app.close();
  return Math.round((N / ms) * 1000);
}

/** This process's CPU (user + system) per job since `since`, in µs: the worker's own cost, not the server's. */
const cpuPerJob = { outbox: [], bare: [] };
function cpuUsPerJob(since) {
  const used = process.cpuUsage(since);
  return Math.round((used.user + used.system) / N);
}

/** Jobs each fetch of the bare worker returned, over every run (reported as the average batch). */
const fetched = [];
/**
 * N jobs inserted, then drained by the bare worker; jobs/s from the insert to the last sent. `tuned`: the same
 * pg-boss given what the outbox gives its own queue (its fetch-order index, made on the empty table, and
 * statistics before the drain), a second anchor reported beside the first, never instead of it.
 */
async function barePgBossRun(tuned = false) {
  const schema = `bench_bare_${++runNo}`;
  const app = await NestFactory.createApplicationContext(emailModule(), { logger: false });
  const email = app.get(EmailService);
  const boss = new PgBoss({ connectionString: postgres.url, schema, max: CONCURRENCY + 4 });
  let failWith;
  const failed = new Promise((_, reject) => (failWith = reject));
  boss.on('error', (err) => failWith(err));
  await boss.start();
  await boss.createQueue('email', { name: 'email', policy: 'standard' });
  const sql = outboxSql(schema, { archive: false, deletionSeconds: false }); // the index's statements
  const { rows: tables } = await pool.query(sql.fetchOrderIndexed, ['email', schema]);
  if (tuned) await pool.query(sql.indexFetchOrder(tables[0].table_name));
  let sent = 0;
  let resolveDone;
  const done = new Promise((r) => (resolveDone = r));
  const jobs = Array.from({ length: N }, (_, i) => ({
    name: 'email',
    data: { input: input(i), key: idempotencyKeyFrom('bare', runNo, i) },
    retryLimit: 7,
  }));
  await boss.insert(jobs);
  if (tuned) await pool.query(sql.analyze(tables[0].table_name));
  const started = performance.now();
  const cpu = process.cpuUsage();
  const worker = bareWorker(
    boss,
    email,
    { sent: () => ++sent === N && resolveDone(), fail: failWith },
    { concurrency: CONCURRENCY, fetched },
  );
  await within(Promise.race([done, failed]), RUN_LIMIT_MS, `the bare pg-boss run (${sent} of ${N} sent)`);
  const ms = performance.now() - started;
  if (!tuned) cpuPerJob.bare.push(cpuUsPerJob(cpu));
  await worker.stop();
  const { rows } = await pool.query(
    `SELECT count(*)::int AS n FROM ${schema}.job WHERE name = 'email' AND state = 'completed'`,
  );
  if (rows[0].n !== N) throw new Error(`the bare pg-boss worker completed ${rows[0].n} of ${N} jobs`);
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
    samples.push((await within(sentAt, 30_000, `commit-to-sent sample ${i}`)) - committedAt);
    await new Promise((r) => setTimeout(r, 37 + (i % 7) * 29)); // out of step with the polling
  }
  await app.close();
  samples.sort((a, b) => a - b);
  const at = (q) => Math.round(samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]);
  return { p50: at(0.5), p99: at(0.99) };
}

const load = { start: loadavg().map((x) => Math.round(x * 100) / 100) };
const warmup = {
  bare_pgboss: await barePgBossRun(),
  bare_pgboss_tuned: await barePgBossRun(true),
  outbox: await outboxRun(),
};
cpuPerJob.outbox.length = 0;
cpuPerJob.bare.length = 0;
fetched.length = 0;
const outboxRuns = [];
const bareRuns = [];
const tunedRuns = [];
for (let r = 0; r < ROUNDS; r++) {
  bareRuns.push(await barePgBossRun());
  tunedRuns.push(await barePgBossRun(true));
  outboxRuns.push(await outboxRun());
}
const lat = await latency();
const outboxBest = Math.max(...outboxRuns);
const bareBest = Math.max(...bareRuns);
const tunedBest = Math.max(...tunedRuns);
const result = {
  outbox_jobs_per_s: outboxBest,
  bare_pgboss_jobs_per_s: bareBest,
  outbox_vs_bare_pgboss: Math.round((outboxBest / bareBest) * 100) / 100,
  // The same bare worker on a pg-boss given the outbox's index and statistics: what the job layer costs.
  bare_pgboss_tuned_jobs_per_s: tunedBest,
  outbox_vs_bare_pgboss_tuned: Math.round((outboxBest / tunedBest) * 100) / 100,
  commit_to_sent_p50_ms: lat.p50,
  commit_to_sent_p99_ms: lat.p99,
  rounds: { outbox: outboxRuns, bare_pgboss: bareRuns, bare_pgboss_tuned: tunedRuns },
  warmup,
  // The median of the rounds: this process's CPU per job while it drains (the server and PostgreSQL apart).
  cpu_us_per_job: { outbox: median(cpuPerJob.outbox), bare_pgboss: median(cpuPerJob.bare) },
  loadavg: { ...load, end: loadavg().map((x) => Math.round(x * 100) / 100) },
  jobs: N,
  concurrency: CONCURRENCY,
  latency_samples: LATENCY_SAMPLES,
  bare_pgboss_jobs_per_fetch: Math.round((fetched.reduce((a, n) => a + n, 0) / fetched.length) * 10) / 10,
  pg_boss:
    'pg-boss 10 (the devDependency), bare worker: fetch(name, { batchSize }) again at once when it found jobs ' +
    '(up to 2 x concurrency held), complete(name, ids[]) in batches, at most `concurrency` sends in flight',
};
console.log(
  JSON.stringify(
    requireFigures(
      result,
      [
        'outbox_jobs_per_s',
        'bare_pgboss_jobs_per_s',
        'outbox_vs_bare_pgboss',
        'outbox_vs_bare_pgboss_tuned',
        'commit_to_sent_p50_ms',
        'commit_to_sent_p99_ms',
      ],
      'outbox-pgboss.bench',
    ),
  ),
);
await pool.end();
// pg-boss's pools may still hold idle connections that the server's shutdown now terminates: their
// errors come after every figure was measured and printed.
process.removeAllListeners('uncaughtException');
process.on('uncaughtException', (err) => {
  if (err?.code !== '57P01') throw err; // admin_shutdown: the server is stopping, as asked
});
await postgres.stop();
process.exit(0);

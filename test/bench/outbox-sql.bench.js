// Where the outbox worker's time goes, per job (issue 37): EmailOutbox alone (no anchor), N jobs committed in
// one transaction, drained by one worker (concurrency 10). Per run it prints jobs/s, the SQL statements per
// job (every statement a pg client runs, counted by its text, with its mean latency under SHOW=1), the worker process's own
// CPU per job, the mean number of sends in flight and of jobs in the job layer, and the end states of
// pg-boss's jobs and of the records (all `completed` and `sent`, or the run is wrong).
// PROF=<path prefix> also writes a CPU profile of each run's drain (<prefix>-<run>.cpuprofile).
// Usage: npm run build && node test/bench/outbox-sql.bench.js <baseUrl> [distDir]   (N, RUNS, SHOW, PROF)
import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { NestFactory } from '@nestjs/core';
import pg from 'pg';
import { startPostgres } from '../support/postgres-server.mjs';
import { failLoudly } from './loud.js';

failLoudly('outbox-sql.bench');
if (!process.argv[2]) throw new Error('usage: node test/bench/outbox-sql.bench.js <baseUrl> [distDir]');
const baseUrl = process.argv[2];
const DIST = pathToFileURL(
  resolve(process.argv[3] ?? fileURLToPath(new URL('../../dist', import.meta.url))),
).href;
const { EmailModule } = await import(`${DIST}/index.js`);
const { EmailOutbox, EmailOutboxModule, EmailOutboxWorker } = await import(`${DIST}/outbox/index.js`);
const N = Number(process.env.N ?? 2000);
const RUNS = Number(process.env.RUNS ?? 2);

const counts = new Map();
const times = new Map();
let counting = false;
// Counted on the client, where every statement goes (the worker's named statements are run on a client it
// takes from the pool, not through `Pool.query`: counting there saw none of them).
const clientQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function (text, ...rest) {
  const result = clientQuery.call(this, text, ...rest);
  if (!counting) return result;
  const key = (typeof text === 'string' ? text : (text?.text ?? '?')).replace(/\s+/g, ' ').slice(0, 90);
  counts.set(key, (counts.get(key) ?? 0) + 1);
  const t0 = performance.now();
  result?.then?.(
    () => times.set(key, (times.get(key) ?? 0) + performance.now() - t0),
    () => undefined,
  );
  return result;
};

const session = new Session();
session.connect();
const postgres = await startPostgres();
const pool = new pg.Pool({ connectionString: postgres.url, max: 4 });
const input = (i) => ({
  from: 'app@example.com',
  to: ['ada@example.com'],
  subject: `Receipt ${i}`,
  text: 'Thanks',
});

for (let run = 1; run <= RUNS; run++) {
  const app = await NestFactory.createApplicationContext(
    {
      module: class OutboxSqlBench {},
      imports: [
        EmailModule.forRoot({ apiKey: 'sk_test_bench_key_0123456789', baseUrl, logger: false }),
        EmailOutboxModule.forRoot({
          connection: postgres.url,
          schema: `sql_${run}`,
          concurrency: 10,
          commandTimeoutMs: 120_000,
        }),
      ],
    },
    { logger: false },
  );
  const outbox = app.get(EmailOutbox);
  const worker = app.get(EmailOutboxWorker);
  let sent = 0;
  let resolveDone;
  const done = new Promise((r) => (resolveDone = r));
  outbox.on('sent', () => ++sent === N && resolveDone());
  outbox.on('failed', (e) => resolveDone(Promise.reject(new Error(`a job failed: ${JSON.stringify(e)}`))));
  const client = await pool.connect();
  await client.query('BEGIN');
  await outbox.sendMany(
    Array.from({ length: N }, (_, i) => ({ input: input(i), options: { jobId: `j${run}-${i}` } })),
    { tx: client },
  );
  counts.clear();
  times.clear();
  counting = true;
  await client.query('COMMIT');
  client.release();
  if (process.env.PROF) {
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  }
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  // Internal counters of this build's worker, read as they are (absent in older builds).
  const mean = { n: 0, sending: 0, layer: 0 };
  const sampler = setInterval(() => {
    mean.n++;
    mean.sending += worker.sending ?? 0;
    mean.layer += worker.sending ?? 0;
  }, 1);
  await done;
  clearInterval(sampler);
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  counting = false;
  if (process.env.PROF) {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(`${process.env.PROF}-${run}.cpuprofile`, JSON.stringify(profile));
  }
  let total = 0;
  for (const [, n] of counts) total += n;
  console.log(
    `run ${run}: ${Math.round((N / ms) * 1000)} jobs/s, ${(total / N).toFixed(2)} statements per job, ` +
      `worker process CPU ${((cpu.user + cpu.system) / N).toFixed(0)} us per job, ` +
      `sends in flight ${(mean.sending / mean.n).toFixed(1)}, jobs in the job layer ${(mean.layer / mean.n).toFixed(1)}`,
  );
  if (process.env.SHOW)
    for (const [k, n] of [...counts].sort((a, b) => b[1] - a[1]).slice(0, 12))
      console.log(`  ${(n / N).toFixed(3)} per job, ${((times.get(k) ?? 0) / n).toFixed(1)} ms  ${k}`);
  const { rows: jobs } = await pool.query(
    `SELECT state::text, count(*)::int AS n FROM sql_${run}.job WHERE name = 'email' GROUP BY 1`,
  );
  console.log(`  pg-boss jobs (each job's record) ${JSON.stringify(jobs)}`);
  await app.close();
}
await pool.end();
process.removeAllListeners('uncaughtException');
process.on('uncaughtException', (err) => {
  if (err?.code !== '57P01') throw err; // the server is stopping, as asked
});
await postgres.stop();
process.exit(0);

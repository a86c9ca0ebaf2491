// The outbox's commit-to-sent latency where production PostgreSQL runs (issue 52), beside the same figure on a
// direct connection, in the layout of outbox-worker.bench.js's latency: a producer here (EmailOutbox, worker off,
// one email per transaction through the app's pool, one at a time with a pause between them) and one worker
// process (test/outbox/support/outbox-worker.child.mjs: concurrency 10, polling 0.5 s), both given the same
// address; from the COMMIT's answer to the worker's `sent` line. Topologies:
// - direct: one private PostgreSQL;
// - pgbouncer_transaction: PgBouncer 1.18 in transaction mode (pooler: 'transaction'), the worker listening
//   straight to PostgreSQL (listenConnection);
// - pgbouncer_transaction_polling: the same without listenConnection: the worker polls every 0.5 s (a quarter of
//   the samples: each one is committed just after the worker's last look, so it waits nearly a whole interval,
//   the worst case; commits at random moments wait half of one on average);
// - pgbouncer_session: PgBouncer in session mode (its LISTEN through the pooler);
// - failover_sync / failover_async: a primary and its streaming standby behind HAProxy, replicating synchronously
//   (a commit waits for the standby's flush) or asynchronously (the worker waits for the standby before a send:
//   waitForStandbys).
// Prints one JSON line: <topology>_p50_ms and _p99_ms for each, the load before and after. Usage:
//   npm run bench:outbox [baseUrl]    (BENCH_PRODUCTION_N samples per topology, 200 by default;
//   BENCH_PRODUCTION_ONLY=direct,pgbouncer_transaction to run some)
import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { NestFactory } from '@nestjs/core';
import pg from 'pg';
import { startPgBouncer } from '../support/pgbouncer-server.mjs';
import { startFailoverTopology } from '../support/postgres-failover.mjs';
import { startPostgres } from '../support/postgres-server.mjs';
import { failLoudly, requireFigures, within } from './loud.js';
import { benchServer } from './bench-server.process.js';

failLoudly('outbox-production.bench', 900_000);

const DIST = pathToFileURL(
  resolve(process.env.BENCH_DIST ?? fileURLToPath(new URL('../../dist', import.meta.url))),
).href;
const { EmailModule } = await import(`${DIST}/index.js`);
const { EmailOutbox, EmailOutboxModule } = await import(`${DIST}/outbox/index.js`);
const WORKER_CHILD = fileURLToPath(new URL('../outbox/support/outbox-worker.child.mjs', import.meta.url));
const SAMPLES = Number(process.env.BENCH_PRODUCTION_N ?? 200);
const API_KEY = 'sk_test_bench_key_0123456789';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const quantile = (sorted, q) =>
  Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] * 10) / 10;
const loadNow = () => loadavg().map((x) => Math.round(x * 100) / 100);

/** One worker process on `schema` at `url` (with `pooler` and `listen`); `onSent(jobId)` per email. */
async function workerProcess(connection, schema, onSent) {
  const child = spawn(process.execPath, [WORKER_CHILD, DIST, 'js'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...process.env,
      DATABASE_URL: connection.url,
      ...(connection.pooler ? { OUTBOX_POOLER: connection.pooler } : {}),
      ...(connection.listen ? { OUTBOX_LISTEN_URL: connection.listen } : {}),
      EMAIL_BASE_URL: server.baseUrl,
      EMAIL_API_KEY: API_KEY,
      OUTBOX_SCHEMA: schema,
      CONCURRENCY: '10',
      MAINTENANCE_INTERVAL_MS: '60000', // the module's default
    },
  });
  await within(
    new Promise((ready) => {
      let buf = '';
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (chunk) => {
        buf += chunk;
        const lines = buf.split('\n');
        buf = lines.pop();
        for (const line of lines) {
          if (line === 'ready') ready();
          else if (line.startsWith('sent ')) onSent(line.split(' ')[1]);
        }
      });
    }),
    60_000,
    'the worker process',
  );
  await sleep(500); // listening
  return () => new Promise((r) => (child.once('close', r), child.kill('SIGTERM')));
}

/** Commit-to-sent p50 and p99 through `connection`, one email at a time (a producer here, a worker process). */
async function latency(name, connection, count = SAMPLES) {
  const schema = `bench_${name}`;
  const app = await NestFactory.createApplicationContext(
    {
      module: class ProductionBench {},
      imports: [
        EmailModule.forRoot({ apiKey: API_KEY, baseUrl: server.baseUrl, logger: false }),
        EmailOutboxModule.forRoot({
          connection: connection.url,
          schema,
          worker: false,
          ...(connection.pooler ? { pooler: connection.pooler } : {}),
        }),
      ],
    },
    { logger: false },
  );
  const outbox = app.get(EmailOutbox);
  const pool = new pg.Pool({ connectionString: connection.url, max: 2 });
  pool.on('error', () => undefined);
  const waiting = new Map();
  const stop = await workerProcess(connection, schema, (jobId) => waiting.get(jobId)?.(performance.now()));
  const samples = [];
  try {
    for (let i = 0; i < count; i++) {
      const jobId = `lat-${i}`;
      const sentAt = new Promise((r) => waiting.set(jobId, r));
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await outbox.send(
          { from: 'app@example.com', to: ['ada@example.com'], subject: `Receipt ${i}`, text: 'Thanks' },
          { tx: client, jobId },
        );
        await client.query('COMMIT');
      } finally {
        client.release();
      }
      const committedAt = performance.now();
      samples.push((await within(sentAt, 30_000, `${name}: job ${jobId}`)) - committedAt);
      waiting.delete(jobId);
      await sleep(7 + (i % 7) * 5); // out of step with the polling
    }
  } finally {
    await stop();
    await pool.end();
    await app.close();
  }
  samples.sort((a, b) => a - b);
  const figures = { p50: quantile(samples, 0.5), p99: quantile(samples, 0.99), load: loadNow()[0] };
  console.error(
    `${name}: commit to sent p50 ${figures.p50} ms, p99 ${figures.p99} ms (load ${figures.load})`,
  );
  return figures;
}

/** Each topology: how to start it, the connection it gives, how to stop it. */
const TOPOLOGIES = {
  direct: async () => {
    const postgres = await startPostgres();
    return { connection: { url: postgres.url }, stop: () => postgres.stop() };
  },
  pgbouncer_transaction: async () => pooled('transaction', true),
  pgbouncer_transaction_polling: async () => pooled('transaction', false),
  pgbouncer_session: async () => pooled('session', false),
  failover_sync: async () => {
    const topology = await startFailoverTopology({ synchronous: true });
    return { connection: { url: topology.url }, stop: () => topology.stop() };
  },
  failover_async: async () => {
    const topology = await startFailoverTopology({ synchronous: false });
    return { connection: { url: topology.url }, stop: () => topology.stop() };
  },
};

async function pooled(mode, listen) {
  const postgres = await startPostgres();
  const bouncer = await startPgBouncer(postgres.url, { poolSize: 20 });
  return {
    connection: {
      url: mode === 'transaction' ? bouncer.transactionUrl : bouncer.sessionUrl,
      pooler: mode,
      ...(listen ? { listen: postgres.url } : {}),
    },
    stop: async () => {
      await bouncer.stop();
      await postgres.stop();
    },
  };
}

const only = process.env.BENCH_PRODUCTION_ONLY?.split(',');
const names = Object.keys(TOPOLOGIES).filter((n) => only === undefined || only.includes(n));
const server = await benchServer();
const result = { load_start: loadNow(), samples: SAMPLES };
try {
  for (const name of names) {
    const topology = await TOPOLOGIES[name]();
    try {
      const count = name.endsWith('_polling') ? Math.ceil(SAMPLES / 4) : SAMPLES;
      const { p50, p99, load } = await latency(name, topology.connection, count);
      Object.assign(result, { [`${name}_p50_ms`]: p50, [`${name}_p99_ms`]: p99, [`${name}_load`]: load });
    } finally {
      await topology.stop();
    }
  }
} finally {
  await server.stop();
}
result.load_end = loadNow();
requireFigures(
  result,
  names.flatMap((n) => [`${n}_p50_ms`, `${n}_p99_ms`]),
  'outbox-production.bench',
);
console.log(JSON.stringify(result));
process.exit(0);

// A bare pg-boss worker process (test/bench/bare-pgboss.js) for outbox-worker.bench.js: the anchor of the outbox's
// commit-to-sent latency beside a flow, in the same layout as the outbox's worker process (outbox-worker.child.mjs:
// its own process, EmailModule on the bench server). Reads DATABASE_URL, EMAIL_BASE_URL, EMAIL_API_KEY,
// BARE_SCHEMA and CONCURRENCY; prints "ready" once it fetches, and "sent <jobId>" per email (the job's data.jobId);
// closes on SIGTERM.
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import PgBoss from 'pg-boss';
import { bareWorker } from './bare-pgboss.js';

const env = process.env;
const { EmailModule, EmailService } = await import(process.argv[2] ?? '../../dist/index.js');
const app = await NestFactory.createApplicationContext(
  EmailModule.forRoot({ apiKey: env.EMAIL_API_KEY, baseUrl: env.EMAIL_BASE_URL, logger: false }),
  { logger: false },
);
const concurrency = Number(env.CONCURRENCY ?? 10);
const boss = new PgBoss({
  connectionString: env.DATABASE_URL,
  schema: env.BARE_SCHEMA,
  max: concurrency + 4,
});
boss.on('error', (err) => process.stderr.write(`bare pg-boss: ${err.message}\n`));
await boss.start();
const worker = bareWorker(
  boss,
  app.get(EmailService),
  {
    sent: (job) => process.stdout.write(`sent ${job.data.jobId}\n`),
    fail: (err) => {
      process.stderr.write(`bare pg-boss worker: ${err?.message ?? err}\n`);
      process.exit(1);
    },
  },
  { concurrency },
);
// Stopped beside a flow, it may hold jobs it never sends: they do not count (the bench has its samples).
process.once('SIGTERM', () => {
  void worker
    .stop()
    .catch(() => undefined)
    .then(() => boss.stop({ graceful: false, wait: true }))
    .then(() => app.close())
    .finally(() => process.exit(0));
});
process.stdout.write('ready\n');

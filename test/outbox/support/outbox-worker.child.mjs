// A worker process for the outbox specs, the chaos run and the bench: EmailModule on the sandbox,
// EmailOutboxModule on PostgreSQL with a worker. Run in plain Node with the TypeScript hooks (specs) or
// against dist/ (chaos, bench):
//   node outbox-worker.child.mjs <lib dir URL> <ext>   with env DATABASE_URL, EMAIL_BASE_URL, EMAIL_API_KEY,
//   OUTBOX_SCHEMA and optional CONCURRENCY, ATTEMPTS, ATTEMPT_TIMEOUT_MS, EMAIL_RECONCILE (off),
//   MAINTENANCE_INTERVAL_MS (1000 here, so that specs and the chaos run see purges; the bench gives the default),
//   OUTBOX_POOLER (the pooler option) and OUTBOX_LISTEN_URL (listenConnection), for the runs behind PgBouncer.
// Prints "ready" once its worker runs and "sent <jobId> <messageId>" per email; closes gracefully on SIGTERM.
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';

const [libUrl, ext = 'ts'] = process.argv.slice(2);
const lib = await import(`${libUrl}/index.${ext}`);
const outboxLib = await import(`${libUrl}/outbox/index.${ext}`);
const env = process.env;

class WorkerApp {}
Module({
  imports: [
    lib.EmailModule.forRoot({
      apiKey: env.EMAIL_API_KEY,
      baseUrl: env.EMAIL_BASE_URL,
      logger: false,
      timeoutMs: 5000,
      ...(env.EMAIL_RECONCILE === 'off' ? { reconcile: false } : {}),
    }),
    outboxLib.EmailOutboxModule.forRoot({
      connection: env.DATABASE_URL,
      schema: env.OUTBOX_SCHEMA,
      concurrency: Number(env.CONCURRENCY ?? 10),
      attempts: Number(env.ATTEMPTS ?? 8),
      pollingIntervalMs: 500,
      maintenanceIntervalMs: Number(env.MAINTENANCE_INTERVAL_MS ?? 1000),
      attemptTimeoutMs: Number(env.ATTEMPT_TIMEOUT_MS ?? 120_000),
      backoff: { delayMs: 1000, maxDelayMs: 2000 },
      ...(env.OUTBOX_POOLER ? { pooler: env.OUTBOX_POOLER } : {}),
      ...(env.OUTBOX_LISTEN_URL ? { listenConnection: env.OUTBOX_LISTEN_URL } : {}),
    }),
  ],
})(WorkerApp);

const app = await NestFactory.createApplicationContext(WorkerApp, { logger: false });
const outbox = app.get(outboxLib.EmailOutbox);
outbox.on('sent', ({ jobId, record }) => process.stdout.write(`sent ${jobId} ${record.id}\n`));
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
process.stdout.write('ready\n');

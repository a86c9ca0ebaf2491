// A worker process for the queue specs and the chaos run: EmailModule on the sandbox, EmailQueueModule on
// Redis with a worker. Run in plain Node with the TypeScript hooks (specs) or against dist/ (chaos):
//   node queue-worker.child.mjs <lib dir URL> <ext>   with env REDIS_URL, EMAIL_BASE_URL, EMAIL_API_KEY,
//   QUEUE_NAME and optional WORKER_OPTIONS (JSON), CONCURRENCY, ATTEMPTS, EMAIL_RECONCILE (off).
// Prints "ready" once its worker runs; closes gracefully on SIGTERM.
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';

const [libUrl, ext = 'ts'] = process.argv.slice(2);
const lib = await import(`${libUrl}/index.${ext}`);
const queueLib = await import(`${libUrl}/queue/index.${ext}`);
const env = process.env;

class WorkerApp {}
Module({
  imports: [
    lib.EmailModule.forRoot({
      apiKey: env.EMAIL_API_KEY,
      baseUrl: env.EMAIL_BASE_URL,
      logger: false,
      timeoutMs: 5000,
      // EMAIL_RECONCILE=off: the service's own look-up after an uncertain send is off (see queue-chaos.js).
      ...(env.EMAIL_RECONCILE === 'off' ? { reconcile: false } : {}),
    }),
    queueLib.EmailQueueModule.forRoot({
      connection: env.REDIS_URL,
      queueName: env.QUEUE_NAME,
      concurrency: Number(env.CONCURRENCY ?? 10),
      attempts: Number(env.ATTEMPTS ?? 8),
      backoff: { delayMs: 20, maxDelayMs: 200 },
      workerOptions: JSON.parse(env.WORKER_OPTIONS ?? '{}'),
    }),
  ],
})(WorkerApp);

const app = await NestFactory.createApplicationContext(WorkerApp, { logger: false });
const queue = app.get(queueLib.EmailQueue);
queue.on('sent', ({ jobId, record }) => process.stdout.write(`sent ${jobId} ${record.id}\n`));
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
process.stdout.write('ready\n');

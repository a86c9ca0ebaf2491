// A worker process for the queue specs and the chaos run: EmailModule on the sandbox, EmailQueueModule on
// Redis with a worker. Run in plain Node with the TypeScript hooks (specs) or against dist/ (chaos):
//   node queue-worker.child.mjs <lib dir URL> <ext>   with env REDIS_URL, EMAIL_BASE_URL, EMAIL_API_KEY,
//   QUEUE_NAME and optional WORKER_OPTIONS (JSON), CONCURRENCY, ATTEMPTS, EMAIL_RECONCILE (off).
//   REDIS_CLUSTER_NODES (`host:port,host:port,...`) instead of REDIS_URL: the queue on a Redis Cluster
//   (prefix QUEUE_PREFIX, else the cluster default '{bull}').
// Prints "ready" once its worker runs; closes gracefully on SIGTERM.
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';

const [libUrl, ext = 'ts'] = process.argv.slice(2);
const lib = await import(`${libUrl}/index.${ext}`);
const queueLib = await import(`${libUrl}/queue/index.${ext}`);
const env = process.env;
/** `host:port,...` as ioredis Cluster startup nodes. */
const clusterNodes = (text) =>
  text
    .split(',')
    .filter(Boolean)
    .map((s) => ({ host: s.slice(0, s.lastIndexOf(':')), port: Number(s.slice(s.lastIndexOf(':') + 1)) }));
const connection = env.REDIS_CLUSTER_NODES
  ? { cluster: clusterNodes(env.REDIS_CLUSTER_NODES) }
  : env.REDIS_URL;

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
      connection,
      queueName: env.QUEUE_NAME,
      ...(env.QUEUE_PREFIX ? { prefix: env.QUEUE_PREFIX } : {}),
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

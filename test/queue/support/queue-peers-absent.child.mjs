// Run by queue.peers.spec.ts in plain Node, against a copy of lib/ whose node_modules lack bullmq and
// ioredis: loading them would throw. Prints what happened as one JSON line.
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';

const [libDir] = process.argv.slice(2);
const out = {};
const lib = await import(`${libDir}/index.ts`);
const testing = await import(`${libDir}/testing/index.ts`);
out.loaded = typeof lib.EmailModule === 'function' && typeof testing.EmailSandbox === 'function';
const sandbox = await testing.EmailSandbox.start();
class App {}
Module({
  imports: [lib.EmailModule.forRoot({ apiKey: sandbox.apiKey, baseUrl: sandbox.baseUrl, logger: false })],
})(App);
const app = await NestFactory.createApplicationContext(App, { logger: false });
out.sent = (
  await app
    .get(lib.EmailService)
    .send({ from: 'a@example.com', to: ['b@example.com'], subject: 's', text: 't' })
).status;
await app.close();
await sandbox.close();
// The queue entry point itself loads, and says what to install when it is used.
const queue = await import(`${libDir}/queue/index.ts`);
class QueueApp {}
Module({
  imports: [
    lib.EmailModule.forRoot({
      apiKey: 'sk_test_xxxxxxxxxxxxxxxx',
      baseUrl: 'http://127.0.0.1:9',
      logger: false,
    }),
    queue.EmailQueueModule.forRoot({ connection: 'redis://127.0.0.1:9' }),
  ],
})(QueueApp);
out.queue = await NestFactory.createApplicationContext(QueueApp, { logger: false, abortOnError: false }).then(
  () => 'no error',
  (err) => err.message,
);
// rateLimit with a Redis needs ioredis too, and says so at boot.
class RateApp {}
Module({
  imports: [
    lib.EmailModule.forRoot({
      apiKey: 'sk_test_xxxxxxxxxxxxxxxx',
      baseUrl: 'http://127.0.0.1:9',
      logger: false,
      rateLimit: { requests: { limit: 10, intervalMs: 1000 }, redis: 'redis://127.0.0.1:9' },
    }),
  ],
})(RateApp);
out.rateLimit = await NestFactory.createApplicationContext(RateApp, {
  logger: false,
  abortOnError: false,
}).then(
  () => 'no error',
  (err) => err.message,
);
process.stdout.write(`${JSON.stringify(out)}\n`);
process.exit(0);

// Run by outbox.peers.spec.ts in plain Node, against a copy of lib/ whose node_modules lack pg-boss and pg:
// loading them would throw. Prints what happened as one JSON line.
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';

const [libDir] = process.argv.slice(2);
const out = {};
const lib = await import(`${libDir}/index.ts`);
out.loaded = typeof lib.EmailModule === 'function';
// The outbox entry point itself loads, and says what to install when it is used.
const outbox = await import(`${libDir}/outbox/index.ts`);
out.outboxLoaded = typeof outbox.EmailOutboxModule === 'function';
class OutboxApp {}
Module({
  imports: [
    lib.EmailModule.forRoot({
      apiKey: 'sk_test_xxxxxxxxxxxxxxxx',
      baseUrl: 'http://127.0.0.1:9',
      logger: false,
    }),
    outbox.EmailOutboxModule.forRoot({ connection: 'postgres://app@127.0.0.1:9/db' }),
  ],
})(OutboxApp);
out.outbox = await NestFactory.createApplicationContext(OutboxApp, {
  logger: false,
  abortOnError: false,
}).then(
  () => 'no error',
  (err) => err.message,
);
process.stdout.write(`${JSON.stringify(out)}\n`);

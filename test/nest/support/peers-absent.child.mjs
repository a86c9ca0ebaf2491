// Run by optional-peers.spec.ts in plain Node, against a copy of lib/ whose node_modules lack
// @nestjs/config, @nestjs/terminus and @opentelemetry/api. Prints what happened as one JSON line.
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { createServer } from 'node:http';

const out = {};
const failure = (fn) => {
  try {
    fn();
    return 'no error';
  } catch (err) {
    return err.message;
  }
};
const lib = await import(process.argv[2]);
const traceContext = await import(new URL('telemetry/trace-context.helpers.ts', process.argv[2]).href);
out.loaded = typeof lib.EmailModule === 'function' && typeof lib.EmailErrorInterceptor === 'function';
out.configCall = failure(() => lib.emailConfig());
out.configKey = failure(() => lib.emailConfig.KEY);
out.configProvider = failure(() => lib.emailConfig.asProvider());

class App {}
Module({
  imports: [lib.EmailModule.forRoot({ apiKey: 'k_test_1', baseUrl: 'http://127.0.0.1:9', logger: false })],
})(App);
const app = await NestFactory.createApplicationContext(App, { logger: false });
out.service = app.get(lib.EmailService).constructor.name;
out.health = await app
  .get(lib.EmailHealthIndicator)
  .isHealthy()
  .then(
    () => 'no error',
    (err) => err.message,
  );
await app.close();

// Without @opentelemetry/api, telemetry (on by default) is a no-op: calls work, helpers do nothing.
const server = createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end('[]');
});
await new Promise((done) => server.listen(0, '127.0.0.1', done));
class Traced {}
Module({
  imports: [
    lib.EmailModule.forRoot({
      apiKey: 'k_test_1',
      baseUrl: `http://127.0.0.1:${server.address().port}`,
      logger: false,
    }),
  ],
})(Traced);
const traced = await NestFactory.createApplicationContext(Traced, { logger: false });
out.listWithoutOtel = await traced.get(lib.EmailService).list();
out.capture = String(traceContext.captureEmailTraceContext());
out.runIn = traceContext.runInEmailTraceContext({ traceparent: 'x' }, () => 'ran');
await traced.close();
server.close();
console.log(JSON.stringify(out));

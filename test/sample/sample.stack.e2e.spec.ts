/**
 * The sample's production-stack features over real HTTP: the `/docs` Swagger page built from the
 * package's DTO metadata, a typed template send, the one 400 shape, and traces printed to the console
 * with `OTEL=console`.
 */
import type { INestApplication } from '@nestjs/common';
import { context, metrics, trace } from '@opentelemetry/api';
import type { AddressInfo } from 'node:net';
import type { EmailSandbox } from 'nestjs-transactional-email/testing';
import { createSampleApp } from '../../sample/src/app.setup.js';
import { startLocalRedis, type LocalRedis } from '../../sample/src/redis/local-redis.js';
import { startLocalSandbox } from '../../sample/src/sandbox/local-sandbox.js';
import { registerConsoleTelemetry } from '../../sample/src/stack/otel-console.js';
import { httpClient } from './sample.http.js';

const saved = { ...process.env };
let app: INestApplication;
let sandbox: EmailSandbox;
let redis: LocalRedis | null;
let call: ReturnType<typeof httpClient>;
let stopTelemetry: (() => Promise<void>) | null;
const printed: unknown[] = [];
const consoleDir = console.dir;

beforeAll(async () => {
  delete process.env.EMAIL_BASE_URL;
  delete process.env.EMAIL_API_KEY;
  delete process.env.REDIS_URL;
  process.env.OTEL = 'console';
  console.dir = (value: unknown) => void printed.push(value); // what the console exporter prints
  stopTelemetry = registerConsoleTelemetry(); // as main.ts does, before the app
  redis = await startLocalRedis(); // the sample's notifications run on a queue
  const started = await startLocalSandbox();
  if (!started) throw new Error('the sample should start an embedded sandbox');
  sandbox = started;
  app = await createSampleApp({ sandbox, logger: false });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  call = httpClient(`http://127.0.0.1:${port}`);
});

afterAll(async () => {
  await app?.close();
  await redis?.stop();
  await stopTelemetry?.();
  trace.disable();
  metrics.disable();
  context.disable();
  console.dir = consoleDir;
  process.env = saved;
});

it('serves the Swagger page at /docs, with the DTOs and their limits', async () => {
  const page = await call('GET', '/docs');
  expect(page.status).toBe(200);
  expect(String(page.body)).toContain('swagger');
  const doc = await call('GET', '/docs-json');
  expect(doc.status).toBe(200);
  const schemas = doc.body.components.schemas;
  expect(schemas.SendEmailDto.properties.to).toMatchObject({ type: 'array', maxItems: 50 });
  expect(schemas.AttachmentDto.properties.filename).toMatchObject({ maxLength: 255 });
  expect(Object.keys(doc.body.paths)).toEqual(expect.arrayContaining(['/emails', '/welcome']));
  // The answers are described too: the package's record and error classes, named in the controller.
  const answer = (path: string, method: string, status: string) =>
    doc.body.paths[path][method].responses[status].content['application/json'].schema;
  expect(answer('/emails', 'post', '201')).toEqual({ $ref: '#/components/schemas/EmailLogDto' });
  expect(answer('/emails', 'post', '400')).toEqual({
    $ref: '#/components/schemas/EmailValidationErrorResponseDto',
  });
  expect(answer('/emails/{id}', 'get', '200')).toEqual({ $ref: '#/components/schemas/EmailWithEventsDto' });
  expect(schemas.EmailWithEventsDto.properties.events).toEqual({
    type: 'array',
    description: 'Opens and clicks, newest first.',
    items: { $ref: '#/components/schemas/EmailEventDto' },
  });
  expect(Object.keys(schemas.EmailWithEventsDto.properties)).toEqual(
    expect.arrayContaining(['id', 'toAddresses', 'html', 'bodyText', 'events']),
  );
  expect(schemas.SendEmailDto.properties.cc).toBeUndefined();
});

it('sends through a typed template, and prints its span to the console', async () => {
  const res = await call('POST', '/welcome', { to: 'ada@example.com', name: 'Ada' });
  expect(res.status).toBe(201);
  const sent = sandbox.messages().filter((m) => m.toAddresses.includes('ada@example.com'));
  expect(sent.map((m) => m.subject)).toEqual(['Welcome, Ada']);
  const spans = printed.filter(
    (p): p is { name: string; attributes: Record<string, unknown> } =>
      typeof p === 'object' && p !== null && (p as { name?: unknown }).name === 'email.send',
  );
  expect(spans).toHaveLength(1);
  expect(spans[0].attributes).toMatchObject({ 'email.outcome': 'sent', 'http.response.status_code': 201 });
});

it('answers a bad body in the one 400 shape, sending nothing', async () => {
  const before = sandbox.messages().length;
  const res = await call('POST', '/welcome', { to: 'not an address', name: '' });
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ statusCode: 400, outcome: 'not-sent' });
  expect(res.body.issues.map((i: { path: string }) => i.path).sort()).toEqual(['name', 'to']);
  expect(sandbox.messages()).toHaveLength(before);
});

/**
 * The sample with EMAIL_BASE_URL and EMAIL_API_KEY set: no embedded sandbox, the configured service is
 * used (here a sandbox standing in for it), and bad variables stop the boot with a clear error.
 */
import type { INestApplication } from '@nestjs/common';
import type { AddressInfo } from 'node:net';
import { EmailSandbox } from 'nestjs-transactional-email/testing';
import { createSampleApp } from '../../sample/src/app.setup.js';
import { startLocalSandbox } from '../../sample/src/sandbox/local-sandbox.js';
import { startRedis, type TestRedis } from '../support/redis-server.mjs';
import { httpClient } from './sample.http.js';

const saved = { ...process.env };
let service: EmailSandbox;
let redis: TestRedis;

beforeAll(async () => {
  service = await EmailSandbox.start();
  redis = await startRedis();
  saved.REDIS_URL = redis.url; // the notification queue's Redis
  process.env.REDIS_URL = redis.url;
});

afterEach(() => {
  process.env = { ...saved };
});

afterAll(async () => {
  await service.close();
  await redis.stop();
});

const configure = (extra: Record<string, string> = {}) =>
  Object.assign(process.env, { EMAIL_BASE_URL: service.baseUrl, EMAIL_API_KEY: service.apiKey, ...extra });

it('uses the service EMAIL_BASE_URL and EMAIL_API_KEY name, and starts no sandbox of its own', async () => {
  configure();
  expect(await startLocalSandbox()).toBeNull();
  const app: INestApplication = await createSampleApp({ logger: false });
  try {
    await app.listen(0, '127.0.0.1');
    const call = httpClient(`http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`);
    const res = await call('POST', '/emails', {
      from: 'hello@example.com',
      to: ['ada@example.com'],
      subject: 'Hi',
      text: 'Hello',
    });
    expect(res.status).toBe(201);
    expect(service.messages().map((m) => m.id)).toContain(res.body.id);
    expect((await call('GET', '/sandbox')).status).toBe(404);
  } finally {
    await app.close();
  }
  // The app did not close a sandbox it does not own: it still answers (401 without a key).
  expect((await fetch(`${service.baseUrl}/emails`)).status).toBe(401);
});

it('refuses to boot on bad email variables, naming each of them', async () => {
  configure({ EMAIL_TIMEOUT_MS: '30s', EMAIL_MAX_RETRIES: '-1' });
  const boot = createSampleApp({ logger: false });
  await expect(boot).rejects.toThrow(
    /EMAIL_TIMEOUT_MS[\s\S]*EMAIL_MAX_RETRIES|EMAIL_MAX_RETRIES[\s\S]*EMAIL_TIMEOUT_MS/,
  );
  await expect(boot).rejects.not.toThrow(service.apiKey);
});

it('refuses a bad SANDBOX_PORT before starting anything', async () => {
  delete process.env.EMAIL_BASE_URL;
  await expect(startLocalSandbox({ SANDBOX_PORT: 'eighty' })).rejects.toThrow(/SANDBOX_PORT/);
});

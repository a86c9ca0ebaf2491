/**
 * The sample with EMAIL_BASE_URL and EMAIL_API_KEY set: no embedded sandbox, the configured service is
 * used (here a sandbox standing in for it), and bad variables stop the boot with a clear error.
 */
import type { INestApplication } from '@nestjs/common';
import type { AddressInfo } from 'node:net';
import { EmailSandbox } from 'nestjs-transactional-email/testing';
import { sampleBanner } from '../../sample/src/app.banner.js';
import { createSampleApp } from '../../sample/src/app.setup.js';
import { startLocalSandbox } from '../../sample/src/sandbox/local-sandbox.js';
import { startRedis, type TestRedis } from '../support/redis-server.mjs';
import { httpClient, waitFor } from './sample.http.js';

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

it("takes each tenant's key from EMAIL_TENANT_<ID>_API_KEY; a tenant without one is left out", async () => {
  const acme = service.mailbox({ name: 'acme', domains: ['acme.example.com'] });
  configure({ EMAIL_TENANT_ACME_API_KEY: acme.apiKey });
  const app: INestApplication = await createSampleApp({ logger: false });
  try {
    await app.listen(0, '127.0.0.1');
    const call = httpClient(`http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`);
    expect((await call('GET', '/tenants')).body).toEqual([expect.objectContaining({ id: 'acme' })]);
    const queued = await call('POST', '/tenants/acme/emails', {
      to: 'wile@example.com',
      subject: 'Hi',
      text: 'Hello',
    });
    expect(queued.status).toBe(202);
    const sent = await waitFor(async () => {
      const res = await call('GET', `/tenants/acme/jobs/${queued.body.id}`);
      return res.body.state === 'sent' || res.body.state === 'failed' ? res.body : undefined;
    }, 'the tenant job');
    expect(sent).toMatchObject({ state: 'sent' });
    expect(acme.messages()).toEqual([
      expect.objectContaining({
        fromAddress: 'Acme <orders@acme.example.com>',
        toAddresses: ['wile@example.com'],
      }),
    ]);
    expect(service.messages().filter((m) => m.toAddresses.includes('wile@example.com'))).toEqual([]);
    expect(
      (await call('POST', '/tenants/globex/emails', { to: 'hank@example.com', subject: 'Hi', text: 'Hello' }))
        .status,
    ).toBe(404);
    // No embedded sandbox: no faults to script.
    expect((await call('POST', '/sandbox/tenants/acme/faults', { mode: 'drop-after' })).status).toBe(404);
  } finally {
    await app.close();
    await acme.close();
  }
  expect(
    sampleBanner({
      url: 'http://127.0.0.1:3000',
      sandbox: null,
      redisUrl: null,
      postgresUrl: null,
      telemetry: false,
    }),
  ).toContain(
    'Tenants: acme, globex, initech, each with its own account (key from EMAIL_TENANT_<ID>_API_KEY):  curl http://127.0.0.1:3000/tenants',
  );
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

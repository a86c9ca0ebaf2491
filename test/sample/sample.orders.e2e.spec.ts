/**
 * The sample's orders (issue 24), started as `main.ts` starts them: an embedded PostgreSQL (DATABASE_URL
 * unset), an embedded sandbox and Redis, over real HTTP. An order and its confirmation are one transaction:
 * a committed order sends exactly one email, a rolled-back one sends none.
 */
import type { INestApplication } from '@nestjs/common';
import type { AddressInfo } from 'node:net';
import type { EmailSandbox } from 'nestjs-transactional-email/testing';
import { createSampleApp } from '../../sample/src/app.setup.js';
import { startLocalPostgres, type LocalPostgres } from '../../sample/src/postgres/local-postgres.js';
import { startLocalRedis, type LocalRedis } from '../../sample/src/redis/local-redis.js';
import { startLocalSandbox } from '../../sample/src/sandbox/local-sandbox.js';
import { httpClient, waitFor } from './sample.http.js';

const saved = { ...process.env };
let app: INestApplication;
let sandbox: EmailSandbox;
let redis: LocalRedis | null;
let postgres: LocalPostgres | null;
let call: ReturnType<typeof httpClient>;

beforeAll(async () => {
  delete process.env.EMAIL_BASE_URL;
  delete process.env.EMAIL_API_KEY;
  delete process.env.REDIS_URL;
  delete process.env.DATABASE_URL;
  redis = await startLocalRedis();
  postgres = await startLocalPostgres();
  if (!postgres) throw new Error('the sample should start an embedded PostgreSQL without DATABASE_URL');
  sandbox = (await startLocalSandbox()) as EmailSandbox;
  app = await createSampleApp({ sandbox, redis, postgres, logger: false });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  call = httpClient(`http://127.0.0.1:${port}`);
}, 60_000);

afterAll(async () => {
  await app?.close(); // stops the embedded PostgreSQL and Redis through their lifecycles
  process.env = saved;
});

describe('orders and their confirmation in one transaction', () => {
  it('POST /orders commits the order and sends its confirmation exactly once', async () => {
    const res = await call('POST', '/orders', { email: 'ada@example.com', item: 'tea' });
    expect(res.status).toBe(201);
    const { jobId } = res.body as { jobId: string };
    const status = await waitFor(
      async () => {
        const s = await call('GET', `/orders/emails/${encodeURIComponent(jobId)}`);
        return s.body?.state === 'sent' ? s.body : undefined;
      },
      'the confirmation sent',
      15_000,
    );
    expect(status.record.subject).toMatch(/^Order \d+ confirmed$/);
    expect(sandbox.messages().filter((m) => m.toAddresses.includes('ada@example.com'))).toHaveLength(1);
  }, 30_000);

  it('POST /orders/rolled-back rolls the order back with its email: nothing is sent', async () => {
    const res = await call('POST', '/orders/rolled-back', { email: 'bob@example.com', item: 'cake' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ rolledBack: true, email: null });
    await new Promise((r) => setTimeout(r, 1500));
    expect((await call('GET', `/orders/emails/${encodeURIComponent(res.body.jobId)}`)).status).toBe(404);
    expect(sandbox.messages().filter((m) => m.toAddresses.includes('bob@example.com'))).toHaveLength(0);
  }, 30_000);
});

import { randomUUID } from 'node:crypto';
import type { TestingModule } from '@nestjs/testing';
import { bullJobIdOf } from '../../lib/queue/bullmq.backend.js';
import { EmailQueue, EmailQueueModule, type EmailQueueOptions } from '../../lib/queue/index.js';
import { EmailSandbox as Sandbox } from '../../lib/testing/index.js';
import { emailApp } from '../support/email-app.js';
import { startRedis, type TestRedis } from '../support/redis-server.mjs';

/** The input queue specs send (a new subject per call so that findSent tells them apart). */
export function mail(subject = `Order ${randomUUID().slice(0, 8)}`) {
  return { from: 'shop@example.com', to: ['ada@example.com'], subject, text: 'Hello' };
}

/** A queue name no other spec uses. */
export const freshQueueName = (): string => `q${randomUUID().replaceAll('-', '').slice(0, 12)}`;

/** An app with EmailModule on the sandbox and EmailQueueModule on Redis; fast backoff by default. */
export async function queueApp(
  sandbox: Sandbox,
  options: Partial<EmailQueueOptions> & { connection: NonNullable<EmailQueueOptions['connection']> },
): Promise<{ moduleRef: TestingModule; queue: EmailQueue; close: () => Promise<void> }> {
  const { moduleRef, close } = await emailApp({
    apiKey: sandbox.apiKey,
    baseUrl: sandbox.baseUrl,
    timeoutMs: 3000,
    imports: [EmailQueueModule.forRoot({ backoff: { delayMs: 20, maxDelayMs: 100 }, ...options })],
  });
  moduleRef.enableShutdownHooks?.();
  return { moduleRef, queue: moduleRef.get(EmailQueue), close };
}

/** POST /emails requests the sandbox received, with their Idempotency-Key. */
export function posts(
  sandbox: Sandbox,
): Array<{ key: string | undefined; status: number | null; fault: string | null }> {
  return sandbox
    .requests()
    .filter((r) => r.method === 'POST' && r.path.endsWith('/emails'))
    .map((r) => ({ key: r.headers['idempotency-key'], status: r.status, fault: r.fault }));
}

/** What queue specs run against: one Redis and one sandbox per spec file (see `useQueueWorld`). */
export interface QueueWorld {
  redis: TestRedis;
  sandbox: Sandbox;
}

/**
 * Starts a private Redis and a sandbox before the spec file's tests and stops them after; the sandbox
 * is reset before each test. Read the fields of the returned object inside the tests.
 */
export function useQueueWorld(): QueueWorld {
  const world = {} as QueueWorld;
  beforeAll(async () => {
    world.redis = await startRedis();
    world.sandbox = await Sandbox.start();
  });
  afterAll(async () => {
    await world.sandbox?.close();
    await world.redis?.stop();
  });
  beforeEach(() => world.sandbox.reset());
  return world;
}

/** The module's record of a job, as kept in its BullMQ job's data (what the worker sends and its progress). */
export async function jobRecordOf(
  url: string,
  queueName: string,
  jobId: string,
): Promise<Record<string, unknown>> {
  const { Redis } = await import('ioredis');
  const client = new Redis(url);
  try {
    const data = await client.hget(`bull:${queueName}:${bullJobIdOf(jobId)}`, 'data');
    return JSON.parse(String(data)) as Record<string, unknown>;
  } finally {
    client.disconnect();
  }
}

import { randomUUID } from 'node:crypto';
import { Test, type TestingModule } from '@nestjs/testing';
import { EmailModule } from '../../lib/index.js';
import { EmailQueue, EmailQueueModule, type EmailQueueOptions } from '../../lib/queue/index.js';
import type { EmailSandbox } from '../../lib/testing/index.js';

/** The input queue specs send (a new subject per call so that findSent tells them apart). */
export function mail(subject = `Order ${randomUUID().slice(0, 8)}`) {
  return { from: 'shop@example.com', to: ['ada@example.com'], subject, text: 'Hello' };
}

/** A queue name no other spec uses. */
export const freshQueueName = (): string => `q${randomUUID().replaceAll('-', '').slice(0, 12)}`;

/** An app with EmailModule on the sandbox and EmailQueueModule on Redis; fast backoff by default. */
export async function queueApp(
  sandbox: EmailSandbox,
  options: Partial<EmailQueueOptions> & { connection: string },
): Promise<{ moduleRef: TestingModule; queue: EmailQueue; close: () => Promise<void> }> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      EmailModule.forRoot({
        apiKey: sandbox.apiKey,
        baseUrl: sandbox.baseUrl,
        logger: false,
        timeoutMs: 3000,
      }),
      EmailQueueModule.forRoot({ backoff: { delayMs: 20, maxDelayMs: 100 }, ...options }),
    ],
  }).compile();
  moduleRef.enableShutdownHooks?.();
  await moduleRef.init();
  const queue = moduleRef.get(EmailQueue);
  return { moduleRef, queue, close: () => moduleRef.close() };
}

/** POST /emails requests the sandbox received, with their Idempotency-Key. */
export function posts(
  sandbox: EmailSandbox,
): Array<{ key: string | undefined; status: number | null; fault: string | null }> {
  return sandbox
    .requests()
    .filter((r) => r.method === 'POST' && r.path.endsWith('/emails'))
    .map((r) => ({ key: r.headers['idempotency-key'], status: r.status, fault: r.fault }));
}

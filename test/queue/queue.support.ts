import { randomUUID } from 'node:crypto';
import type { TestingModule } from '@nestjs/testing';
import { EmailQueue, EmailQueueModule, type EmailQueueOptions } from '../../lib/queue/index.js';
import type { EmailSandbox } from '../../lib/testing/index.js';
import { emailApp } from '../support/email-app.js';

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
  sandbox: EmailSandbox,
): Array<{ key: string | undefined; status: number | null; fault: string | null }> {
  return sandbox
    .requests()
    .filter((r) => r.method === 'POST' && r.path.endsWith('/emails'))
    .map((r) => ({ key: r.headers['idempotency-key'], status: r.status, fault: r.fault }));
}

// One worker process of `npm run bench:accounts` (accounts.bench.js): an app on dist/ with the accounts of
// ACCOUNTS (JSON: id -> account), the accounts' limits shared through REDIS_URL, and an EmailQueue worker on
// the bench's queue. Counts the 429s its jobs drew and the jobs that failed; prints them as one JSON line
// when the parent says `stop` over IPC, then closes.
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const dist = pathToFileURL(join(process.cwd(), 'dist')).href;
const { EmailModule } = await import(`${dist}/index.js`);
const { EmailQueue, EmailQueueModule } = await import(`${dist}/queue/index.js`);

const table = JSON.parse(process.env.ACCOUNTS);
const app = await NestFactory.createApplicationContext(
  {
    module: class AccountsBenchWorker {},
    imports: [
      EmailModule.forRoot({
        baseUrl: process.env.EMAIL_BASE_URL,
        accounts: (id) => table[id] ?? null,
        rateLimit: { redis: process.env.REDIS_URL, prefix: 'bench-accounts' },
        logger: false,
        timeoutMs: 10_000,
      }),
      EmailQueueModule.forRoot({
        connection: process.env.REDIS_URL,
        queueName: process.env.QUEUE_NAME,
        concurrency: Number(process.env.CONCURRENCY ?? 16),
      }),
    ],
  },
  { logger: false },
);
const queue = app.get(EmailQueue);
const tally = { rateLimited: 0, failed: 0, sent: 0 };
queue.on('rateLimited', () => tally.rateLimited++);
queue.on('failed', () => tally.failed++);
queue.on('sent', () => tally.sent++);
process.send?.({ ready: true });
process.on('message', async (m) => {
  if (m !== 'stop') return;
  process.send?.({ tally });
  await app.close();
  process.exit(0);
});

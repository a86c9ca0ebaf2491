import { EmailSuppressedError, EmailSuppressions } from '../../lib/index.js';
import { EmailQueue, EmailQueueModule } from '../../lib/queue/index.js';
import { freshQueueName, useQueueWorld } from '../queue/queue.support.js';
import { emailApp } from '../support/email-app.js';
import { requestedOf } from './support/shared-list.js';

// The gate in front of the queue (BullMQ): a job to a suppressed address is refused before anything is
// written; a job whose address becomes suppressed while it waits ends at its next attempt without a
// request, `EmailSuppressedError` its final error (never retried), as `status` and `waitFor` report it.
// The list lives in the queue's Redis (`suppression.redis`); faults are on, and the sandbox's request log
// never names a suppressed address.

const world = useQueueWorld();
const mail = (to: string) => ({ from: 'shop@example.com', to: [to], subject: `For ${to}`, text: 'Hello' });
const requested = (): string => requestedOf(world.sandbox);

async function app() {
  const queueName = freshQueueName();
  const built = await emailApp({
    sandbox: world.sandbox,
    timeoutMs: 3000,
    suppression: { redis: world.redis.url, prefix: `sup-${queueName}` },
    imports: [
      EmailQueueModule.forRoot({
        connection: world.redis.url,
        queueName,
        backoff: { delayMs: 20, maxDelayMs: 100 },
      }),
    ],
  });
  return {
    ...built,
    queue: built.moduleRef.get(EmailQueue),
    suppressions: built.moduleRef.get(EmailSuppressions),
  };
}

describe('the suppression gate and the queue', () => {
  it('refuses a job to a suppressed address before anything is written (sendMany: the whole call)', async () => {
    const { queue, suppressions, close } = await app();
    try {
      await suppressions.add('gone@example.com', { reason: 'bounced' });
      const err = await queue.send(mail('Gone@example.com'), { jobId: 'refused-1' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(EmailSuppressedError);
      expect(err).toMatchObject({
        items: [0],
        addresses: [{ address: 'Gone@example.com', reason: 'bounced' }],
      });
      expect(await queue.status('refused-1')).toBeNull();
      const many = await queue
        .sendMany([
          { input: mail('a@example.com'), options: { jobId: 'many-a' } },
          { input: mail('gone@example.com'), options: { jobId: 'many-gone' } },
        ])
        .catch((e: unknown) => e);
      expect(many).toMatchObject({ items: [1] });
      expect(await queue.status('many-a')).toBeNull();
      expect(world.sandbox.requests()).toHaveLength(0);
    } finally {
      await close();
    }
  });

  it('ends a job whose address became suppressed while it waited, at its next attempt, without a request', async () => {
    const { queue, suppressions, close } = await app();
    try {
      await queue.send(mail('later@example.com'), { jobId: 'waits', delayMs: 1500 });
      await suppressions.add('later@example.com', { reason: 'complained' });
      const err = await queue.waitFor('waits', { timeoutMs: 20_000 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(EmailSuppressedError);
      expect(err).toMatchObject({
        outcome: 'not-sent',
        addresses: [{ address: 'later@example.com', reason: 'complained' }],
      });
      const status = await queue.status('waits');
      expect(status).toMatchObject({
        state: 'failed',
        attempts: 1,
        error: { name: 'EmailSuppressedError', outcome: 'not-sent' },
      });
      expect(world.sandbox.requests()).toHaveLength(0);
    } finally {
      await close();
    }
  });

  it('through random faults, sends every job once except those to suppressed addresses, which never reach the service', async () => {
    const { queue, suppressions, close } = await app();
    try {
      world.sandbox.faults.random({
        probability: 0.3,
        seed: 49,
        modes: ['drop-after', { mode: 'status', status: 503 }],
      });
      const addresses = Array.from({ length: 30 }, (_, i) => `user${i}@example.com`);
      const suppressed = new Set(addresses.filter((_, i) => i % 5 === 0));
      await queue.sendMany(
        addresses
          .filter((a) => !suppressed.has(a))
          .map((a) => ({ input: mail(a), options: { jobId: `j-${a}`, delayMs: 2000 } })),
      );
      // Suppressed before their jobs could be written: refused at the door.
      await suppressions.add([...suppressed], { reason: 'bounced' });
      for (const a of suppressed)
        await expect(queue.send(mail(a), { jobId: `j-${a}` })).rejects.toBeInstanceOf(EmailSuppressedError);
      // One more becomes suppressed while its job waits.
      await suppressions.add('user1@example.com', { reason: 'manual' });
      const ends = await Promise.all(
        addresses
          .filter((a) => !suppressed.has(a))
          .map((a) =>
            queue.waitFor(`j-${a}`, { timeoutMs: 60_000 }).then(
              () => 'sent',
              (e: Error) => e.name,
            ),
          ),
      );
      expect(ends.filter((e) => e === 'EmailSuppressedError')).toHaveLength(1);
      expect(ends.filter((e) => e === 'sent')).toHaveLength(addresses.length - suppressed.size - 1);
      world.sandbox.faults.random(null);
      const delivered = world.sandbox.messages().flatMap((m) => m.toAddresses);
      expect(new Set(delivered).size).toBe(delivered.length); // once each
      for (const a of [...suppressed, 'user1@example.com']) expect(requested()).not.toContain(a);
    } finally {
      world.sandbox.faults.random(null);
      await close();
    }
  });
});

// Issue 50, item 5: what docs/queue.md promises dashboards (Bull Board and the like, handed `emailQueue.bullQueue`)
// see of a job: its name after the email, its data holding the input and the idempotency key, and a failed job's
// data holding `lastError` (class name, message, outcome) beside BullMQ's own `failedReason`. Read here through
// BullMQ's own API, as a dashboard reads it.
import { bullJobIdOf } from '../../lib/queue/bullmq.backend.js';
import { freshQueueName, queueApp, useQueueWorld } from './queue.support.js';

const world = useQueueWorld();

describe("a queue's jobs as a dashboard sees them", () => {
  it('a sent job: its name, input and key; a failed job: lastError and failedReason', async () => {
    const app = await queueApp(world.sandbox, { connection: world.redis.url, queueName: freshQueueName() });
    try {
      const input = {
        from: 'shop@example.com',
        to: ['ada@example.com'],
        subject: 'Your order',
        text: 'Order 7',
      };
      const sent = await app.queue.send(input, { jobId: 'order:7' });
      await app.queue.waitFor(sent.jobId, { timeoutMs: 15_000 });
      const job = await app.queue.bullQueue.getJob(bullJobIdOf('order:7'));
      expect(job?.name).toBe('email: Your order');
      expect(job?.data).toMatchObject({ jobId: 'order:7', idempotencyKey: sent.idempotencyKey, input });
      expect(await job?.getState()).toBe('completed');

      // the sandbox answers 400 to a template it does not know: the job fails at once
      const bad = { from: 'shop@example.com', to: ['ada@example.com'], templateId: 99_999, variables: {} };
      const failed = await app.queue.send(bad, { jobId: 'order:8' });
      await app.queue.waitFor(failed.jobId, { timeoutMs: 15_000 }).catch(() => undefined);
      const status = await app.queue.status(failed.jobId);
      expect(status?.state).toBe('failed');
      const failedJob = await app.queue.bullQueue.getJob(bullJobIdOf('order:8'));
      expect(failedJob?.name).toBe('email: template 99999');
      expect(await failedJob?.getState()).toBe('failed');
      expect(failedJob?.data).toMatchObject({
        jobId: 'order:8',
        idempotencyKey: failed.idempotencyKey,
        input: bad,
        lastError: { name: 'EmailBadRequestError', message: status?.error?.message, outcome: 'not-sent' },
      });
      expect(failedJob?.failedReason).toBe(status?.error?.message);
    } finally {
      await app.close();
    }
  });
});

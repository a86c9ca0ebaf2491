import { EmailSendUncertainError } from '../../lib/index.js';
import { startRedis, type TestRedis } from '../support/redis-server.mjs';
import { startWorkerProcess, until, type WorkerProcess } from './support/queue-processes.js';
import { freshQueueName, jobRecordOf, mail, posts, queueApp } from './queue.support.js';
import { useSandbox } from '../support/sandbox.js';

let redis: TestRedis;
const sandbox = useSandbox({ reset: true });
const children: WorkerProcess[] = [];

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  for (const c of children) if (c.child.exitCode === null) c.child.kill('SIGKILL');
  await redis.stop();
});

const envFor = (queueName: string, extra: Record<string, string> = {}) => ({
  REDIS_URL: redis.url,
  EMAIL_BASE_URL: sandbox.baseUrl,
  EMAIL_API_KEY: sandbox.apiKey,
  QUEUE_NAME: queueName,
  ...extra,
});

describe('EmailQueue across processes', () => {
  it('a producer-only instance queues; a worker in another process sends', async () => {
    const queueName = freshQueueName();
    const worker = await startWorkerProcess(envFor(queueName));
    children.push(worker);
    const producer = await queueApp(sandbox, { connection: redis.url, queueName, worker: false });
    try {
      const { jobId, idempotencyKey } = await producer.queue.send(mail(), { jobId: 'remote-1' });
      const record = await producer.queue.waitFor(jobId, { timeoutMs: 15_000 });
      expect(posts(sandbox)).toEqual([{ key: idempotencyKey, status: 201, fault: null }]);
      await until(() => worker.lines.includes(`sent ${jobId} ${record.id}`), 5000, 'the worker to report it');
    } finally {
      await producer.close();
      worker.child.kill('SIGTERM');
      await worker.exited;
    }
  }, 120_000);

  it('a worker SIGKILLed mid-send: another process takes the job over and sends no second email', async () => {
    const queueName = freshQueueName();
    const workerOptions = { lockDuration: 1000, stalledInterval: 500 };
    const doomed = await startWorkerProcess(
      envFor(queueName, { WORKER_OPTIONS: JSON.stringify(workerOptions) }),
    );
    children.push(doomed);
    const producer = await queueApp(sandbox, { connection: redis.url, queueName, worker: false });
    try {
      // The service creates the message, then holds its answer: the worker dies before it hears.
      sandbox.faults.add({ route: 'POST /emails', mode: 'delay', ms: 1500, at: 'after' });
      const { jobId } = await producer.queue.send(mail(), { jobId: 'killed-1' });
      await until(() => posts(sandbox).length === 1, 10_000, 'the first POST');
      doomed.child.kill('SIGKILL');
      await doomed.exited;
      // The killed attempt's key stays "still being processed" (409) until the held answer is out: the rescuer's
      // attempts must outlast that (the suite's 20 ms backoff could spend eight of them in under a second).
      const rescuer = await queueApp(sandbox, {
        connection: redis.url,
        queueName,
        workerOptions,
        attempts: 20,
        backoff: { delayMs: 200, maxDelayMs: 400 },
      });
      try {
        const record = await producer.queue.waitFor(jobId, { timeoutMs: 15_000 });
        expect(sandbox.messages().map((m) => m.id)).toEqual([record.id]);
        expect(await producer.queue.status(jobId)).toMatchObject({ state: 'sent' });
      } finally {
        await rescuer.close();
      }
    } finally {
      await producer.close();
    }
  }, 120_000);

  it('a job whose workers die more often than maxStalledCount ends EmailSendUncertainError, key kept', async () => {
    const queueName = freshQueueName();
    const workerOptions = { lockDuration: 1000, stalledInterval: 500, maxStalledCount: 1 };
    const env = envFor(queueName, { WORKER_OPTIONS: JSON.stringify(workerOptions) });
    const producer = await queueApp(sandbox, { connection: redis.url, queueName, worker: false });
    try {
      // Every POST is processed, then its answer held: each worker dies before it hears.
      sandbox.faults.add({ route: 'POST /emails', mode: 'delay', ms: 4000, at: 'after', times: Infinity });
      const first = await startWorkerProcess(env);
      children.push(first);
      const { jobId, idempotencyKey } = await producer.queue.send(mail(), { jobId: 'twice-dead' });
      await until(() => posts(sandbox).length === 1, 30_000, 'the first POST');
      first.child.kill('SIGKILL');
      await first.exited;
      const second = await startWorkerProcess(env);
      children.push(second);
      await until(() => posts(sandbox).length === 2, 30_000, 'the second POST');
      second.child.kill('SIGKILL');
      await second.exited;
      sandbox.faults.clear();
      const rescuer = await queueApp(sandbox, { connection: redis.url, queueName, workerOptions });
      try {
        const err = await producer.queue.waitFor(jobId, { timeoutMs: 15_000 }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(EmailSendUncertainError);
        expect(err).toMatchObject({ idempotencyKey, outcome: 'uncertain' });
        expect(await producer.queue.status(jobId)).toMatchObject({
          state: 'failed',
          error: { name: 'EmailSendUncertainError', outcome: 'uncertain' },
        });
        // stored in the job's record, not only worked out when read
        expect((await jobRecordOf(redis.url, queueName, jobId)).error).toMatchObject({
          name: 'EmailSendUncertainError',
        });
      } finally {
        await rescuer.close();
      }
    } finally {
      await producer.close();
    }
  }, 180_000);
});

import { keySlot } from '../../lib/peers/redis-cluster.helpers.js';
import { EmailJobConflictError, EmailQueueUnavailableError } from '../../lib/queue/index.js';
import { bullJobIdOf } from '../../lib/queue/bullmq.backend.js';
import type { EmailJobStatus } from '../../lib/interfaces/email-job.interface.js';
import { redisCli, startRedisCluster, type TestRedisCluster } from '../support/redis-cluster.mjs';
import { useSandbox } from '../support/sandbox.js';
import { startWorkerProcess, until, type WorkerProcess } from './support/queue-processes.js';
import { freshQueueName, posts, queueApp } from './queue.support.js';

// EmailQueue itself on a real Redis Cluster (3 masters, 3 replicas), started once for the file: the key
// scenarios of the single-Redis specs (look-alike mail, cancel, the 429 pause shared by processes, a
// frozen master, a replica that does not confirm, a master killed mid-run) with the default prefix
// '{bull}', so every key of the module on one slot. The last test kills the queue's master.

const PREFIX = '{bull}';
let cluster: TestRedisCluster;
let child: WorkerProcess | undefined;
/** The queue the worker process serves (the 429 and failover tests share it). */
const shared = freshQueueName();
/** Short locks: a job whose worker lost its master mid-job is taken over within seconds. */
const workerOptions = { lockDuration: 2000, stalledInterval: 1000 };
const sandbox = useSandbox({ maxRequestLog: 2000, reset: true });

beforeAll(async () => {
  cluster = await startRedisCluster();
  child = await startWorkerProcess(
    {
      REDIS_CLUSTER_NODES: cluster.nodes.map((n) => `${n.host}:${n.port}`).join(','),
      EMAIL_BASE_URL: sandbox.baseUrl,
      EMAIL_API_KEY: sandbox.apiKey,
      QUEUE_NAME: shared,
      WORKER_OPTIONS: JSON.stringify(workerOptions),
    },
    60_000,
  );
}, 120_000);
afterAll(async () => {
  if (child && child.child.exitCode === null) {
    child.child.kill('SIGTERM');
    await within(child.exited, 10_000);
    if (child.child.exitCode === null) child.child.kill('SIGKILL');
  }
  await cluster?.stop();
}, 30_000);

const onCluster = () => ({ cluster: cluster.nodes });
const look = (code: string) => ({
  from: 'shop@example.com',
  to: ['ada@example.com'],
  subject: 'Your login code',
  text: `Your code is ${code}`,
});
const bodyOf = (id: number | undefined) => sandbox.messages().find((m) => m.id === id)?.bodyText;

/** Settles with the promise's outcome, or 'still running' after `ms` (a loose bound, not a timing assertion). */
function within<T>(promise: Promise<T>, ms: number): Promise<T | 'still running'> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<'still running'>((r) => (timer = setTimeout(() => r('still running'), ms))),
  ]).finally(() => clearTimeout(timer)); // no timer left to hold the worker after the file
}

/** A node's process id (to freeze it with SIGSTOP). */
async function pidOf(node: { host: string; port: number }): Promise<number> {
  return Number(/process_id:(\d+)/.exec(await redisCli(node, 'info', 'server'))?.[1]);
}

/** Retries while the queue is unavailable (a failover under way): same job id, so never a second job. */
async function retrying<T>(what: () => Promise<T>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await what();
    } catch (err) {
      if (!(err instanceof EmailQueueUnavailableError) || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

describe('EmailQueue on a Redis Cluster', () => {
  it('look-alike jobs each send their own email once; every key the module writes is on the queue slot', async () => {
    const queueName = freshQueueName();
    const app = await queueApp(sandbox, { connection: onCluster(), queueName, concurrency: 3 });
    try {
      sandbox.faults.add({ route: 'POST /emails', mode: 'drop-after', times: 2 });
      sandbox.faults.add({ route: 'POST /emails', mode: 'status', status: 503, times: 1 });
      const same = await Promise.all(
        ['s1', 's2', 's3'].map((id) => app.queue.send(look('SAME'), { jobId: id })),
      );
      const a = await app.queue.send(look('AAAA'), { jobId: 'look-a' });
      const b = await app.queue.send(look('BBBB'), { jobId: 'look-b' });
      const records = await Promise.all(
        [...same, a, b].map((j) => app.queue.waitFor(j.jobId, { timeoutMs: 15_000 })),
      );
      expect(new Set(records.map((r) => r.id)).size).toBe(5);
      expect(records.map((r) => bodyOf(r.id))).toEqual([
        ...Array.from({ length: 3 }, () => 'Your code is SAME'),
        'Your code is AAAA',
        'Your code is BBBB',
      ]);
      expect(sandbox.messages()).toHaveLength(5);
      // The record scripts (compare and set) on a cluster: a kept id answered, another input refused.
      expect(await app.queue.send(look('AAAA'), { jobId: 'look-a' })).toEqual(a);
      await expect(app.queue.send(look('OTHER'), { jobId: 'look-a' })).rejects.toBeInstanceOf(
        EmailJobConflictError,
      );
      expect(sandbox.messages()).toHaveLength(5);

      const owner = await cluster.masterOf(PREFIX);
      const keys = (await redisCli(owner, 'keys', `*${queueName}*`)).split('\n').filter(Boolean);
      expect(keys).toEqual(
        expect.arrayContaining(
          // each job's record is its BullMQ job (its data)
          ['s1', 's2', 's3', 'look-a', 'look-b'].map((id) => `${PREFIX}:${queueName}:${bullJobIdOf(id)}`),
        ),
      );
      expect(keys).toContain(`${PREFIX}:${queueName}:meta`);
      for (const key of keys) expect(`${key} ${keySlot(key)}`).toBe(`${key} ${keySlot(PREFIX)}`);
      for (const master of await cluster.masters()) {
        if (master.port === owner.port) continue;
        expect(await redisCli(master, 'keys', `*${queueName}*`)).toBe('');
      }
    } finally {
      await app.close();
    }
  }, 40_000);

  it('cancel and reschedule: a cancelled job is never sent, a rescheduled one is', async () => {
    const app = await queueApp(sandbox, { connection: onCluster(), queueName: freshQueueName() });
    try {
      await app.queue.send(look('KEEP'), { jobId: 'cancel-me', delayMs: 60_000 });
      await app.queue.send(look('SOON'), { jobId: 'move-me', delayMs: 60_000 });
      expect(await app.queue.cancel('cancel-me')).toEqual({ cancelled: true });
      expect(await app.queue.reschedule('move-me', { delayMs: 0 })).toEqual({ rescheduled: true });
      const record = await app.queue.waitFor('move-me', { timeoutMs: 15_000 });
      expect(bodyOf(record.id)).toBe('Your code is SOON');
      expect(await app.queue.status('cancel-me')).toMatchObject({ state: 'cancelled' });
      expect(await app.queue.cancel('move-me')).toEqual({ cancelled: false, state: 'sent' });
      expect(sandbox.messages()).toHaveLength(1);
    } finally {
      await app.close();
    }
  }, 30_000);

  it('429: the queue waits Retry-After in every process (no POST from either worker), spending no attempt', async () => {
    const app = await queueApp(sandbox, { connection: onCluster(), queueName: shared });
    try {
      sandbox.faults.add({ route: 'POST /emails', mode: 'status', status: 429, retryAfter: 1, times: 1 });
      await app.queue.send(look('RL-0'), { jobId: 'rl-0' });
      await until(() => posts(sandbox).length === 1, 10_000, 'the 429');
      // The pause as Redis holds it (BullMQ's limiter key): no worker of either process may send before it ends.
      const limiter = `${PREFIX}:${shared}:limiter`;
      const owner = await cluster.masterOf(PREFIX);
      let pauseEnds = 0;
      await until(
        async () => {
          // the time before asking: the pause ends no sooner than that plus what is left of it (redis-cli is a
          // process of its own, which a busy machine can take hundreds of ms to start and end)
          const asked = Date.now();
          const ms = Number(await redisCli(owner, 'pttl', limiter));
          if (ms > 0) pauseEnds = asked + ms;
          return ms > 0;
        },
        10_000,
        'the pause in Redis',
      );
      const more = await app.queue.sendMany(
        [1, 2, 3, 4, 5, 6].map((n) => ({ input: look(`RL-${n}`), options: { jobId: `rl-${n}` } })),
      );
      await Promise.all(
        ['rl-0', ...more.map((q) => q.jobId)].map((id) => app.queue.waitFor(id, { timeoutMs: 15_000 })),
      );
      const times = sandbox
        .requests()
        .filter((r) => r.method === 'POST')
        .map((r) => Date.parse(r.receivedAt));
      expect(times).toHaveLength(8);
      // (a loose 50 ms for the two clocks' reading of the pause's end)
      for (const t of times.slice(1)) expect(t).toBeGreaterThanOrEqual(pauseEnds - 50);
      expect(await app.queue.status('rl-0')).toMatchObject({ state: 'sent', attempts: 1 });
    } finally {
      await app.close();
    }
  }, 40_000);

  it('a frozen master bounds send and status; the job may land, and a retry with its id is one email', async () => {
    const queueName = freshQueueName();
    const app = await queueApp(sandbox, { connection: onCluster(), queueName, commandTimeoutMs: 500 });
    try {
      await retrying(() => app.queue.send(look('WARM'), { jobId: 'warm-1' })); // once connected
      const owner = await cluster.masterOf(PREFIX);
      await redisCli(owner, 'client', 'pause', '2500', 'ALL'); // every client's command waits 2.5 s
      const err = await within(
        app.queue.send(look('FROZEN'), { jobId: 'frozen-1' }).catch((e: unknown) => e),
        8000,
      );
      expect(err).toBeInstanceOf(EmailQueueUnavailableError);
      expect(err).toMatchObject({ jobId: 'frozen-1', mayLand: true, outcome: 'uncertain' });
      const read = await within(
        app.queue.status('warm-1').catch((e: unknown) => e),
        8000,
      );
      expect(read).toBeInstanceOf(EmailQueueUnavailableError);
      await until(async () => (await app.queue.status('warm-1').catch(() => null)) !== null, 15_000, 'Redis');
      await app.queue.send(look('FROZEN'), { jobId: 'frozen-1' });
      const record = await app.queue.waitFor('frozen-1', { timeoutMs: 15_000 });
      expect(bodyOf(record.id)).toBe('Your code is FROZEN');
      expect(sandbox.messages().filter((m) => m.bodyText === 'Your code is FROZEN')).toHaveLength(1);
    } finally {
      await app.close();
    }
  }, 40_000);

  it('no replica confirms in time: EmailQueueUnavailableError with mayLand true; the job lands once', async () => {
    const queueName = freshQueueName();
    // WAIT holds 2 s (0.4 of commandTimeoutMs): one in flight and the next fit in the 5 s, even here.
    const app = await queueApp(sandbox, { connection: onCluster(), queueName, commandTimeoutMs: 5000 });
    const owner = await cluster.masterOf(PREFIX);
    const ownerId = (await cluster.masters()).find((m) => m.port === owner.port)?.id;
    const replica = (await cluster.replicas()).find((r) => r.masterId === ownerId);
    expect(replica).toBeDefined();
    const pid = await pidOf(replica!);
    try {
      await retrying(() => app.queue.send(look('BEFORE'), { jobId: 'confirmed-1' })); // confirmed by the replica
      process.kill(pid, 'SIGSTOP');
      let err: unknown;
      try {
        err = await within(
          app.queue.send(look('UNSURE'), { jobId: 'unconfirmed-1' }).catch((e: unknown) => e),
          15_000,
        );
      } finally {
        process.kill(pid, 'SIGCONT');
      }
      expect(err).toBeInstanceOf(EmailQueueUnavailableError);
      expect(err).toMatchObject({ jobId: 'unconfirmed-1', mayLand: true, outcome: 'uncertain' });
      expect((err as Error).message).toMatch(/no replica confirmed the write within 2000 ms/);
      // written on the master: it is sent once, and a retry with its id answers the kept job
      const record = await app.queue.waitFor('unconfirmed-1', { timeoutMs: 15_000 });
      await retrying(() => app.queue.send(look('UNSURE'), { jobId: 'unconfirmed-1' }));
      expect(
        sandbox
          .messages()
          .filter((m) => m.bodyText === 'Your code is UNSURE')
          .map((m) => m.id),
      ).toEqual([record.id]);
      await until(
        async () => (await redisCli(replica!, 'info', 'replication')).includes('master_link_status:up'),
        15_000,
        'the replica back in sync',
      );
    } finally {
      process.kill(pid, 'SIGCONT');
      await app.close();
    }
  }, 40_000);

  it('the master of the queue killed mid-run: every acknowledged job is sent once, each its own email', async () => {
    if (cluster.external) return; // killMaster needs a private cluster
    const app = await queueApp(sandbox, {
      connection: onCluster(),
      queueName: shared,
      commandTimeoutMs: 2000,
      workerOptions,
    });
    try {
      // Each POST held a little after it is processed, so that sends are in flight when the master dies.
      sandbox.faults.add({ route: 'POST /emails', mode: 'delay', ms: 150, at: 'after', times: Infinity });
      const ids = Array.from({ length: 60 }, (_, i) => `fo-${i}`);
      const acknowledged: string[] = [];
      const sending = (async () => {
        for (const [i, jobId] of ids.entries()) {
          await retrying(() => app.queue.send(look(`FO-${i}`), { jobId }));
          acknowledged.push(jobId);
          await new Promise((r) => setTimeout(r, 30));
        }
      })();
      await until(() => sandbox.messages().length >= 5, 15_000, 'the first emails');
      const { killed, promoted } = await cluster.killMaster(PREFIX);
      expect(promoted.port).not.toBe(killed.port);
      await sending;
      expect(acknowledged).toEqual(ids);
      const statuses: Array<EmailJobStatus | null> = [];
      // One deadline for all: a job in flight on the dead master comes back once its lock has run out and a
      // worker's stalled check (on the promoted master) gives it back, which a busy machine can make slow.
      const sentBy = Date.now() + 60_000;
      for (const jobId of ids) {
        await retrying(() => app.queue.waitFor(jobId, { timeoutMs: Math.max(1, sentBy - Date.now()) }));
        statuses.push(await retrying(() => app.queue.status(jobId)));
      }
      expect(statuses.map((s) => s?.state)).toEqual(ids.map(() => 'sent'));
      expect(statuses.map((s) => bodyOf(s?.record?.id))).toEqual(ids.map((_, i) => `Your code is FO-${i}`));
      const bodies = sandbox.messages().map((m) => m.bodyText);
      expect(bodies).toHaveLength(ids.length);
      expect(new Set(bodies).size).toBe(ids.length);
      // BullMQ's own view agrees: every job completed, none failed (a job whose completion was sent while
      // the master was dead once ended failed there, "Too many Cluster redirections", its email sent)
      const bullStates = () =>
        Promise.all(
          ids.map(async (id) => (await app.queue.bullQueue.getJob(bullJobIdOf(id)))?.getState() ?? 'none'),
        );
      await until(
        async () => (await bullStates()).every((s) => s === 'completed' || s === 'failed'),
        20_000,
        "BullMQ's jobs to end",
      );
      expect(await bullStates()).toEqual(ids.map(() => 'completed'));
    } finally {
      sandbox.faults.clear();
      await app.close();
    }
  }, 150_000);
});

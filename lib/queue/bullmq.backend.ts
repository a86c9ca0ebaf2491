import { Inject, Injectable } from '@nestjs/common';
import type { Cluster, Redis } from 'ioredis';
import { EmailQueueUnavailableError } from '../errors/email-queue.error.js';
import type { EmailJobRecord } from '../interfaces/email-job.interface.js';
import type { EmailJobBackend, HeldJob, StoredEmailJob } from '../jobs/email-job.interface.js';
import type { NewEmailJob } from '../jobs/email-job.rules.js';
import { deliveredOf, recordOf, storedOf } from '../jobs/job-record.helpers.js';
import type { QueueSendOptions } from './email-queue.interface.js';
import { EmailQueueResolvedOptions, type ResolvedEmailQueueOptions } from './email-queue.options.js';
import { QueueRedis } from './queue-redis.store.js';
import { replicaCountOf, writerOf } from './redis-replica.helpers.js';
import { ReplicaWaits } from './replica-wait.store.js';

/**
 * The ioredis refusal of a command while disconnected with the offline queue off: proof that it was never
 * written. Anything else (a timeout, "Connection is closed" for commands in flight) may have reached Redis.
 */
const NOT_WRITTEN = /enableOfflineQueue options is false/;

/** How often the replicas of the queue's master are counted again. */
const REPLICA_CHECK_MS = 5000;

/**
 * A job as BullMQ holds it (KEYS: the job's hash, the queue's completed, failed, active and delayed keys; ARGV[1]
 * the job's id): its data, where it is, its return value and end, BullMQ's count of the times it took the job back
 * from a worker that stalled (`stc`), when a delayed job is due (BullMQ's score is ms * 4096 plus an order), and
 * the SHA-1 of its data (the token `REPLACE` compares). Nil for a job BullMQ does not hold.
 */
const READ = `local f = redis.call('HMGET', KEYS[1], 'data', 'returnvalue', 'finishedOn', 'stc')
if not f[1] then return false end
local state = 'waiting'
local due = false
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then state = 'completed'
elseif redis.call('ZSCORE', KEYS[3], ARGV[1]) then state = 'failed'
elseif redis.call('LPOS', KEYS[4], ARGV[1]) then state = 'active'
else
  local score = redis.call('ZSCORE', KEYS[5], ARGV[1])
  if score then due = tostring(math.floor(tonumber(score) / 4096)) end
end
return {f[1], state, f[2] or false, f[3] or false, f[4] or '0', due, redis.sha1hex(f[1])}`;

/**
 * A waiting job's data replaced (ARGV[4]) only if it is unchanged since it was read (its SHA-1 ARGV[2], BullMQ's
 * stall count ARGV[3]) and no worker has it and it has not ended (KEYS as for `READ`, without the delayed set).
 * BullMQ takes a job for a worker in one script too: either this runs first and the worker reads the new data, or
 * the worker has it and this changes nothing.
 */
const REPLACE = `local data = redis.call('HGET', KEYS[1], 'data')
if not data or redis.sha1hex(data) ~= ARGV[2] then return 0 end
if (redis.call('HGET', KEYS[1], 'stc') or '0') ~= ARGV[3] then return 0 end
if redis.call('ZSCORE', KEYS[2], ARGV[1]) or redis.call('ZSCORE', KEYS[3], ARGV[1]) then return 0 end
if redis.call('LPOS', KEYS[4], ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'data', ARGV[4])
return 1`;

type Scripted = (Redis | Cluster) & {
  emailJobRead(...keysAndArgs: string[]): Promise<Array<string | null> | null>;
  emailJobReplace(...keysAndArgs: string[]): Promise<number>;
};

/**
 * BullMQ's id of a job id: `@` and the job id with `%` and `:` escaped. A job's keys are `<prefix>:<queue>:<id>`
 * and its suffixes, beside the queue's own (`wait`, `meta`, `id`, `marker`, ...): no BullMQ key word starts with
 * `@`, so no job id can land on one of them (an id `wait` would overwrite the queue's wait list), and with `:`
 * escaped no id reaches another job's suffixes. BullMQ also refuses ids with `:` and integers; `@` is neither.
 * Two job ids never share one: the escape is undone by reading it back.
 */
export function bullJobIdOf(jobId: string): string {
  return `@${jobId.replace(/[%:]/g, (c) => (c === '%' ? '%25' : '%3A'))}`;
}

/**
 * The queue's engine: each job's record is its BullMQ job. Its data is the record as written (`StoredEmailJob`:
 * the input, key and progress, which dashboards show), BullMQ's own state says where it is, its return value is
 * the message record once sent, and BullMQ's retention (`removeOnComplete`, `removeOnFail`) keeps it for
 * `keepSentForMs` and `keepFailedForMs`. A worker's take is BullMQ's, and its outcome one BullMQ write; a cancel and
 * a reschedule are a compare-and-set of a waiting job's data (`REPLACE`).
 */
@Injectable()
export class BullMqBackend implements EmailJobBackend<QueueSendOptions, never> {
  readonly keyScope: readonly string[];
  /** The producer with our scripts, and its replica waits: made at the first call (the connection opens then). */
  private scripted?: { readonly client: Scripted; readonly waits: ReplicaWaits };
  /** Replicas of each key's master, read at most every few seconds. */
  private replicas: { count: number; at: number; writer: unknown } | undefined;

  constructor(
    @Inject(EmailQueueResolvedOptions) private readonly options: ResolvedEmailQueueOptions,
    private readonly redis: QueueRedis,
  ) {
    this.keyScope = [options.queueName];
  }

  /** The producer connection, with the scripts that read and replace a job defined on it. */
  private get client(): Scripted {
    return this.withScripts().client;
  }

  /** Confirms writes on a replica before `send` answers (where the master has replicas). */
  private get waits(): ReplicaWaits {
    return this.withScripts().waits;
  }

  private withScripts(): { readonly client: Scripted; readonly waits: ReplicaWaits } {
    if (this.scripted) return this.scripted;
    const producer = this.redis.producer;
    producer.defineCommand('emailJobRead', { numberOfKeys: 5, lua: READ });
    producer.defineCommand('emailJobReplace', { numberOfKeys: 4, lua: REPLACE });
    // WAIT answers (0) before the call's own timeout runs out: so the error says why.
    this.scripted = {
      client: producer as Scripted,
      waits: new ReplicaWaits(producer, waitTimeoutOf(this.options.commandTimeoutMs)),
    };
    return this.scripted;
  }

  async write(jobs: ReadonlyArray<NewEmailJob<QueueSendOptions>>): Promise<Array<HeldJob | null>> {
    const jobIds = jobs.map((j) => j.record.jobId);
    const ms = this.options.commandTimeoutMs;
    // Only a connection that is up gets the write: one that is not never sends it later.
    if (!(await this.redis.connectedWithin(ms)))
      throw this.unavailable(`no connection to Redis within ${ms} ms`, undefined, jobIds, false);
    try {
      const added = jobs.map((j) => this.bullJobOf(j));
      // BullMQ keeps a job id it holds as it is: the data read back says whether this call wrote it.
      await this.redis.queue.addBulk(added.map((a) => a.job));
      const kept = await Promise.all(added.map((a) => this.client.hget(a.key, 'data')));
      await this.confirmOnReplica(added[0]!.key, jobIds);
      return kept.map((text, i) => {
        if (text === null) throw new Error(`job ${jobIds[i]} is not in Redis after it was added`);
        if (text === added[i]!.text) return null;
        // the job as it was written (its fingerprint says whether this call's input is the same)
        return { record: deliveredOf(JSON.parse(text) as StoredEmailJob, 0).record, token: '' };
      });
    } catch (err) {
      const reason = (err as Error).message;
      throw this.unavailable(reason, err, jobIds, !NOT_WRITTEN.test(reason));
    }
  }

  async read(jobId: string): Promise<HeldJob | null> {
    const id = bullJobIdOf(jobId);
    const keys = this.keysOf(id);
    const got = await this.command(
      () => this.client.emailJobRead(keys.job, keys.completed, keys.failed, keys.active, keys.delayed, id),
      `reading job ${jobId}`,
    );
    if (!got) return null;
    const [data, state, output, finishedOn, stc, due, sha] = got;
    const facts = {
      state: state as 'waiting' | 'active' | 'completed' | 'failed',
      takenBack: Number(stc),
      ...(due ? { dueAt: Number(due) } : {}),
      ...(finishedOn ? { finishedAt: Number(finishedOn) } : {}),
      ...(output ? { output: JSON.parse(output) as unknown } : {}),
    };
    const record = recordOf(JSON.parse(data!) as StoredEmailJob, facts);
    return { record, token: `${sha}:${stc}:${due ? 'delayed' : state}` };
  }

  async replace(held: HeldJob, next: EmailJobRecord): Promise<boolean> {
    const [sha, stc, where] = held.token.split(':') as [string, string, string];
    const id = bullJobIdOf(next.jobId);
    const keys = this.keysOf(id);
    const what = `updating job ${next.jobId}`;
    const data = JSON.stringify(storedOf(next, Number(stc)));
    const done = await this.command(
      () =>
        this.client.emailJobReplace(keys.job, keys.completed, keys.failed, keys.active, id, sha, stc, data),
      what,
    );
    if (done !== 1) return false;
    // A change answered (a cancel, a reschedule) survives a failover as an enqueue does.
    await this.command(() => this.confirmOnReplica(keys.job, [next.jobId]), what);
    if (where === 'delayed') await this.moveDelayed(id, next).catch(() => undefined);
    return true;
  }

  unavailable(what: string, cause: unknown, jobIds: readonly string[] = [], mayLand = true): Error {
    return new EmailQueueUnavailableError({ jobIds, mayLand, reason: what, cause });
  }

  /**
   * BullMQ's delayed job moved to match its record: a cancelled one comes out now (a worker ends it, and its
   * retention starts), a rescheduled one at its new time. A job in the wait list is taken soon anyway: a worker
   * gives it back to its record's time. A refusal (a worker took it meanwhile) changes nothing: that worker read
   * the new data.
   */
  private async moveDelayed(id: string, next: EmailJobRecord): Promise<void> {
    const job = await this.redis.queue.getJob(id);
    if (!job) return;
    if (next.state === 'cancelled') await job.promote();
    else await job.changeDelay(Math.max(0, Math.ceil(next.runAt - Date.now())));
  }

  /**
   * Redis replicates asynchronously: an add (or a change) its master answered is lost if the master dies
   * before a replica has it. Where the master has replicas, one `WAIT` (shared by the writes in flight) holds the
   * answer until a replica has every write so far; without one in time, the job may or may not survive.
   */
  private async confirmOnReplica(key: string, jobIds: readonly string[]): Promise<void> {
    const count = async () => ({
      count: await replicaCountOf(this.client, key),
      at: Date.now(),
      writer: writerOf(this.client, key),
    });
    const r = this.replicas;
    // Counted again every few seconds, and at once for a new master (a failover promoted a replica)
    if (!r || r.writer !== writerOf(this.client, key) || Date.now() - r.at > REPLICA_CHECK_MS)
      this.replicas = await count();
    if (this.replicas?.count === 0) return;
    if ((await this.waits.confirm(key)) > 0) return;
    // and after a WAIT nobody answered: a master with no replica left has nothing to wait for.
    this.replicas = await count();
    if (this.replicas.count > 0)
      throw this.unavailable(
        `no replica confirmed the write within ${waitTimeoutOf(this.options.commandTimeoutMs)} ms`,
        undefined,
        jobIds,
        true,
      );
  }

  /** BullMQ's job for a new job: its data the record as stored (dashboards show the input and key), its name the email's. */
  private bullJobOf({ record, options }: NewEmailJob<QueueSendOptions>) {
    const o = this.options;
    const delay = Math.max(0, Math.ceil(record.runAt - Date.now()));
    const data = storedOf(record, 0);
    const id = bullJobIdOf(record.jobId);
    const job = {
      name: jobNameOf(o, record),
      data,
      opts: {
        jobId: id,
        removeOnComplete: { age: Math.ceil(o.keepSentForMs / 1000) },
        removeOnFail: { age: Math.ceil(o.keepFailedForMs / 1000) },
        ...(delay > 0 ? { delay } : {}),
        ...(options.priority ? { priority: options.priority } : {}),
      },
    };
    return { job, key: this.keysOf(id).job, text: JSON.stringify(data) };
  }

  private keysOf(id: string) {
    const queue = this.redis.queue;
    return {
      job: queue.toKey(id),
      completed: queue.keys.completed!,
      failed: queue.keys.failed!,
      active: queue.keys.active!,
      delayed: queue.keys.delayed!,
    };
  }

  /** A Redis command once the connection is up; a failure of Redis itself becomes the queue's unavailable error. */
  private async command<T>(run: () => Promise<T>, what: string): Promise<T> {
    const ms = this.options.commandTimeoutMs;
    if (!(await this.redis.connectedWithin(ms)))
      throw this.unavailable(`${what}: no connection to Redis within ${ms} ms`, undefined);
    try {
      return await run();
    } catch (err) {
      if (err instanceof EmailQueueUnavailableError) throw err;
      throw this.unavailable(`${what}: ${(err as Error).message}`, err);
    }
  }
}

/**
 * How long `WAIT` holds: 0.4 of the command timeout (which also bounds `WAIT` on the producer, and `send` as
 * a whole). A write that joins the `WAIT` after the one in flight waits for both: 0.8 of the timeout at
 * most, so that Redis, not the client's own timeout, says that no replica confirmed it.
 */
function waitTimeoutOf(commandTimeoutMs: number): number {
  return Math.max(1, Math.round(commandTimeoutMs * 0.4));
}

function jobNameOf(o: ResolvedEmailQueueOptions, record: EmailJobRecord): string {
  try {
    return String(o.jobName(record.input));
  } catch {
    return 'email';
  }
}

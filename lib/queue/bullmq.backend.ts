import type { Queue } from 'bullmq';
import type { Cluster, Redis } from 'ioredis';
import { EmailQueueUnavailableError } from '../errors/email-queue.error.js';
import type { EmailJobRecord } from '../interfaces/email-job.interface.js';
import type { EmailJobBackend, HeldJob } from '../jobs/email-job.interface.js';
import type { NewEmailJob } from '../jobs/email-job.rules.js';
import { keepRecordUntil } from '../policy/job.policy.js';
import type { BullJobData } from './email-queue-host.worker.js';
import type { QueueSendOptions } from './email-queue.interface.js';
import type { ResolvedEmailQueueOptions } from './email-queue.options.js';
import { replicaCountOf, writerOf } from './redis-replica.helpers.js';
import { ReplicaWaits } from './replica-wait.store.js';

/**
 * The ioredis refusal of a command while disconnected with the offline queue off: proof that it was never
 * written. Anything else (a timeout, "Connection is closed" for commands in flight) may have reached Redis.
 */
const NOT_WRITTEN = /enableOfflineQueue options is false/;

/** How often the replicas of the queue's master are counted again. */
const REPLICA_CHECK_MS = 5000;

/** Keeps a record unless one is kept already (then answers it). */
const CREATE = `local held = redis.call('GET', KEYS[1])
if held then return held end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false`;

/** Replaces a record only if it is still the one read. */
const REPLACE = `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1`;

type Scripted = (Redis | Cluster) & {
  emailJobCreate(key: string, json: string, px: number): Promise<string | null>;
  emailJobReplace(key: string, token: string, json: string, px: number): Promise<number>;
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
 * The queue's engine: each job's record is one Redis string beside BullMQ's keys (same prefix, so one
 * hash slot on a cluster with a tagged prefix), compared and set by two small scripts; BullMQ's job only
 * wakes a worker for it. `producer` fails fast while Redis is away and never replays a command.
 */
export class BullMqBackend implements EmailJobBackend<QueueSendOptions, never> {
  readonly keyScope: readonly string[];
  private readonly redis: Scripted;
  /** Confirms writes on a replica before `send` answers (where the master has replicas). */
  private readonly waits: ReplicaWaits;
  /** Replicas of each key's master, read at most every few seconds. */
  private replicas: { count: number; at: number; writer: unknown } | undefined;

  constructor(
    private readonly queue: Queue,
    producer: Redis | Cluster,
    private readonly options: ResolvedEmailQueueOptions,
    /** True once the producer is up (waiting for it at most `ms`). */
    private readonly connectedWithin: (ms: number) => Promise<boolean>,
  ) {
    this.keyScope = [options.queueName];
    producer.defineCommand('emailJobCreate', { numberOfKeys: 1, lua: CREATE });
    producer.defineCommand('emailJobReplace', { numberOfKeys: 1, lua: REPLACE });
    this.redis = producer as Scripted;
    // WAIT answers (0) before the call's own timeout runs out: so the error says why.
    this.waits = new ReplicaWaits(producer, waitTimeoutOf(options.commandTimeoutMs));
  }

  async write(jobs: ReadonlyArray<NewEmailJob<QueueSendOptions>>): Promise<Array<HeldJob | null>> {
    const jobIds = jobs.map((j) => j.record.jobId);
    const ms = this.options.commandTimeoutMs;
    // Only a connection that is up gets the write: one that is not never sends it later.
    if (!(await this.connectedWithin(ms)))
      throw this.unavailable(`no connection to Redis within ${ms} ms`, undefined, jobIds, false);
    try {
      const held = await Promise.all(
        jobs.map(async ({ record }) => {
          const text = await this.redis.emailJobCreate(
            this.keyOf(record.jobId),
            JSON.stringify(record),
            this.pxOf(record),
          );
          return text === null ? null : heldOf(text);
        }),
      );
      // A new job, or one kept waiting whose BullMQ job may be missing (an earlier add that failed): BullMQ
      // ignores an add whose id it holds, so adding again is safe.
      const adds = jobs.filter((j, i) => {
        const kept = held[i];
        return !kept || (kept.record.state === 'waiting' && kept.record.fingerprint === j.record.fingerprint);
      });
      await this.queue.addBulk(adds.map((j) => this.bullJobOf(j)));
      await this.confirmOnReplica(this.keyOf(jobIds[0] as string), jobIds);
      return held;
    } catch (err) {
      const reason = (err as Error).message;
      throw this.unavailable(reason, err, jobIds, !NOT_WRITTEN.test(reason));
    }
  }

  async read(jobId: string): Promise<HeldJob | null> {
    const text = await this.command(() => this.redis.get(this.keyOf(jobId)), `reading job ${jobId}`);
    return text === null ? null : heldOf(text);
  }

  async replace(held: HeldJob, next: EmailJobRecord): Promise<boolean> {
    const key = this.keyOf(next.jobId);
    const what = `updating job ${next.jobId}`;
    const done = await this.command(
      () => this.redis.emailJobReplace(key, held.token, JSON.stringify(next), this.pxOf(next)),
      what,
    );
    // A change answered (a cancel, a reschedule, a job recorded sent) survives a failover as an enqueue does.
    if (done === 1) await this.command(() => this.confirmOnReplica(key, [next.jobId]), what);
    return done === 1;
  }

  async moveEngineJob({ jobId }: EmailJobRecord, atMs: number | 'cancelled'): Promise<void> {
    const job = await this.command(() => this.queue.getJob(bullJobIdOf(jobId)), `reading job ${jobId}`);
    if (!job) return;
    // A worker that takes the job meanwhile reads its record first: a cancelled job is dropped, a later
    // start given back. So a refusal here (the job is locked by that worker) changes nothing.
    if (atMs === 'cancelled') return void (await job.remove().catch(() => undefined));
    if (!(await job.isDelayed())) return;
    await job.changeDelay(Math.max(0, atMs - Date.now())).catch(() => undefined);
  }

  /**
   * Redis replicates asynchronously: an add (or a change) its master answered is lost if the master dies
   * before a replica has it. Where the master has replicas, one `WAIT` (shared by the writes in flight) holds the
   * answer until a replica has every write so far; without one in time, the job may or may not survive.
   */
  private async confirmOnReplica(key: string, jobIds: readonly string[]): Promise<void> {
    const count = async () => ({
      count: await replicaCountOf(this.redis, key),
      at: Date.now(),
      writer: writerOf(this.redis, key),
    });
    const r = this.replicas;
    // Counted again every few seconds, and at once for a new master (a failover promoted a replica)
    if (!r || r.writer !== writerOf(this.redis, key) || Date.now() - r.at > REPLICA_CHECK_MS)
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

  unavailable(what: string, cause: unknown, jobIds: readonly string[] = [], mayLand = true): Error {
    return new EmailQueueUnavailableError({ jobIds, mayLand, reason: what, cause });
  }

  /** BullMQ's job for a new job: its data names the job and holds its input, as dashboards show it. */
  private bullJobOf({ record, options }: NewEmailJob<QueueSendOptions>) {
    const o = this.options;
    const delay = Math.max(0, record.runAt - Date.now());
    const data: BullJobData = {
      jobId: record.jobId,
      idempotencyKey: record.idempotencyKey,
      input: record.input,
    };
    return {
      name: jobNameOf(o, record),
      data,
      opts: {
        jobId: bullJobIdOf(record.jobId),
        removeOnComplete: { age: Math.ceil(o.keepSentForMs / 1000) },
        removeOnFail: { age: Math.ceil(o.keepFailedForMs / 1000) },
        ...(delay > 0 ? { delay } : {}),
        ...(options.priority ? { priority: options.priority } : {}),
      },
    };
  }

  private keyOf(jobId: string): string {
    return `${this.options.prefix ?? 'bull'}:${this.options.queueName}:email-job:${jobId}`;
  }

  private pxOf(record: EmailJobRecord): number {
    const keep = { sentMs: this.options.keepSentForMs, failedMs: this.options.keepFailedForMs };
    const now = Date.now();
    // whole ms: a runAt from a slot of an account's line has fractions, and PX takes an integer
    return Math.max(1000, Math.ceil(keepRecordUntil(record, keep, now) - now));
  }

  /** A Redis command once the connection is up; a failure of Redis itself becomes the queue's unavailable error. */
  private async command<T>(run: () => Promise<T>, what: string): Promise<T> {
    const ms = this.options.commandTimeoutMs;
    if (!(await this.connectedWithin(ms)))
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

function heldOf(text: string): HeldJob {
  return { record: JSON.parse(text) as EmailJobRecord, token: text };
}

function jobNameOf(o: ResolvedEmailQueueOptions, record: EmailJobRecord): string {
  try {
    return String(o.jobName(record.input));
  } catch {
    return 'email';
  }
}

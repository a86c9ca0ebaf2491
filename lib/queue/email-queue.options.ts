import type { WorkerOptions } from 'bullmq';
import type { Cluster, Redis, RedisOptions } from 'ioredis';
import { EmailOptionsError } from '../errors/email-options.error.js';
import {
  countProblem,
  resolveJobOptions,
  showOption,
  type EmailJobBackoff,
  type EmailJobOptions,
  type JobModuleAsyncOptions,
  type ResolvedEmailJobOptions,
} from '../jobs/email-job.options.js';
import { isClusterConnection, isClusterNodes, type RedisClusterNodes } from '../peers/ioredis.loader.js';
import { clusterNodesProblems, clusterPrefixProblem } from '../peers/redis-cluster.helpers.js';
import type { EmailInput } from '../interfaces/email-input.interface.js';

/**
 * Delays between attempts of a queued job (the job layer's backoff, the same as the outbox's).
 * @publicApi
 */
export type EmailQueueBackoff = EmailJobBackoff;

/**
 * How to reach Redis: a URL, ioredis options, an ioredis client (duplicated, never closed by the queue),
 * or a Redis Cluster: `{ cluster: [{ host, port }, ...], ...clusterOptions }` or an ioredis `Cluster`
 * (duplicated too). On a cluster, `prefix` must hold a hash tag (`{email}`; `{bull}` when left out).
 * @publicApi
 */
export type EmailQueueConnection = string | RedisOptions | Redis | Cluster | RedisClusterNodes;

/** The prefix on a Redis Cluster when the options give none: BullMQ's own, hash-tagged. */
export const CLUSTER_DEFAULT_PREFIX = '{bull}';

/**
 * BullMQ `Worker` options the queue passes on as they are (it sets connection, prefix and concurrency itself).
 * @publicApi
 */
export type EmailQueueWorkerOptions = Partial<Omit<WorkerOptions, 'connection' | 'prefix' | 'concurrency'>>;

/**
 * Options of `EmailQueueModule.forRoot`: the job options both engines share (`EmailJobOptions`) and the queue's own.
 * @publicApi
 */
export interface EmailQueueOptions extends EmailJobOptions {
  /**
   * A Redis URL (`redis://host:port/db`), ioredis options or an ioredis client. Leave it out to reuse the
   * connection (and prefix) of `@nestjs/bullmq`'s `BullModule.forRoot` (see `bullConfigKey`).
   */
  connection?: EmailQueueConnection;
  /** The `configKey` of the `BullModule.forRoot(configKey, ...)` to reuse when `connection` is left out. @default the default config */
  bullConfigKey?: string;
  /** BullMQ queue name (no `:`). @default 'email' */
  queueName?: string;
  /**
   * Key prefix in Redis. On a Redis Cluster it must hold a hash tag such as `{email}` (every key of a
   * queue on one slot), or the options are refused. @default BullModule's prefix, else 'bull' ('{bull}' on a cluster)
   */
  prefix?: string;
  /**
   * Passed to BullMQ's `Worker` as they are (lockDuration, stalledInterval, ...). `maxStalledCount`
   * (default 1) is how many worker deaths a job survives; past it the job fails `EmailSendUncertainError`.
   */
  workerOptions?: EmailQueueWorkerOptions;
  /** @deprecated the older name of `commandTimeoutMs` (used when `commandTimeoutMs` is left out). */
  enqueueTimeoutMs?: number;
  /** The job name shown in dashboards (Bull Board). @default `email: <subject>` or `email: template <id>` */
  jobName?: (input: EmailInput) => string;
  /**
   * True: a Redis that would lose jobs (no AOF and no RDB snapshots, or an eviction policy other than
   * `noeviction`) is only logged, and the health indicator stays up. @default false (health says down)
   */
  allowVolatileRedis?: boolean;
}

/**
 * Builds `EmailQueueOptions` in a class (`useClass` / `useExisting`).
 * @publicApi
 */
export interface EmailQueueOptionsFactory {
  createEmailQueueOptions(): EmailQueueOptions | Promise<EmailQueueOptions>;
}

/**
 * Options of `EmailQueueModule.forRootAsync` (`imports`, `inject`, `useFactory` | `useClass` | `useExisting`).
 * @publicApi
 */
export type EmailQueueAsyncOptions = JobModuleAsyncOptions<EmailQueueOptions, 'createEmailQueueOptions'>;

/**
 * Options with every default applied.
 * @publicApi
 */
export interface ResolvedEmailQueueOptions extends ResolvedEmailJobOptions {
  readonly connection: EmailQueueConnection;
  readonly queueName: string;
  readonly prefix?: string;
  readonly workerOptions: EmailQueueWorkerOptions;
  /** Worker deaths a job survives (BullMQ's `maxStalledCount`, counted by the queue itself). */
  readonly maxStalledCount: number;
  readonly jobName: (input: EmailInput) => string;
  readonly allowVolatileRedis: boolean;
  /**
   * Set when the connection is `BullModule.forRoot`'s (no `connection` given): the worker is then a
   * `@nestjs/bullmq` processor on that config, which `@nestjs/bullmq` starts and the app's dashboards see.
   */
  readonly bullModule?: { configKey?: string };
}

/**
 * The checked queue options (`ResolvedEmailQueueOptions`) of `EmailQueueModule`, provided under this
 * class, as Nest registers providers by class.
 */
export abstract class EmailQueueResolvedOptions {}

/** What the queue reads from `BullModule.forRoot(...)`'s shared config. */
export interface BullSharedConfig {
  connection?: EmailQueueConnection;
  prefix?: string;
}

/** The default job name shown in dashboards: the subject, or the template id. */
export function defaultJobName(input: EmailInput): string {
  const subject = typeof input.subject === 'string' && input.subject !== '' ? input.subject : undefined;
  const label = subject ?? (input.templateId != null ? `template ${String(input.templateId)}` : 'message');
  return `email: ${label.length > 80 ? `${label.slice(0, 79)}\u2026` : label}`;
}

/**
 * Checks queue options and applies defaults; `bull` is `BullModule.forRoot`'s shared config, used when
 * `connection` is left out.
 * @throws EmailOptionsError naming every problem at once.
 */
export function resolveEmailQueueOptions(
  raw: EmailQueueOptions | null | undefined,
  bull?: BullSharedConfig,
): ResolvedEmailQueueOptions {
  const o = (raw ?? {}) as Partial<EmailQueueOptions>;
  const problems: string[] = [];
  const connection = o.connection ?? bull?.connection;
  if (typeof connection === 'string') {
    if (!/^rediss?:\/\//.test(connection))
      problems.push('connection must be a redis:// or rediss:// URL or ioredis options');
  } else if (typeof connection !== 'object' || connection === null) {
    problems.push(
      'connection is required: a Redis URL (redis://host:port), ioredis options or client, a cluster ' +
        "{ cluster: [{ host, port }, ...] } or an ioredis Cluster, or @nestjs/bullmq's BullModule.forRoot({ connection }) in the app",
    );
  } else if (isClusterNodes(connection)) {
    problems.push(...clusterNodesProblems(connection, 'connection'));
  }
  const job = resolveJobOptions(
    { ...o, commandTimeoutMs: o.commandTimeoutMs ?? o.enqueueTimeoutMs },
    problems,
  );
  if (o.jobName !== undefined && typeof o.jobName !== 'function')
    problems.push('jobName must be a function of the email input');
  const maxStalledCount = o.workerOptions?.maxStalledCount ?? 1;
  const stalledProblem = countProblem('workerOptions.maxStalledCount', maxStalledCount, 0);
  if (stalledProblem !== undefined) problems.push(stalledProblem);
  const queueName = o.queueName ?? 'email';
  if (typeof queueName !== 'string' || queueName === '' || queueName.includes(':')) {
    problems.push(
      `queueName must be a non-empty string without ":" (BullMQ refuses it; got ${showOption(queueName)})`,
    );
  }
  if (o.prefix !== undefined && (typeof o.prefix !== 'string' || o.prefix === '')) {
    problems.push(`prefix must be a non-empty string (got ${showOption(o.prefix)})`);
  }
  const onCluster = isClusterConnection(connection);
  const prefix =
    o.prefix ??
    (o.connection === undefined ? bull?.prefix : undefined) ??
    (onCluster ? CLUSTER_DEFAULT_PREFIX : undefined);
  if (onCluster && typeof prefix === 'string' && prefix !== '') {
    // Refused rather than tagged for the app: the prefix names the keys dashboards and other processes read.
    const name = o.prefix === undefined ? "prefix (BullModule.forRoot's)" : 'prefix';
    const problem = clusterPrefixProblem(prefix, name);
    if (problem !== undefined) problems.push(problem);
  }
  if (o.workerOptions !== undefined && (typeof o.workerOptions !== 'object' || o.workerOptions === null)) {
    problems.push('workerOptions must be an object of BullMQ Worker options');
  }
  if (problems.length > 0) throw new EmailOptionsError(problems.map((p) => `EmailQueueModule: ${p}`));
  return {
    ...job,
    connection: connection as ResolvedEmailQueueOptions['connection'],
    queueName,
    ...(prefix !== undefined ? { prefix } : {}),
    workerOptions: o.workerOptions ?? {},
    maxStalledCount,
    jobName: o.jobName ?? defaultJobName,
    allowVolatileRedis: o.allowVolatileRedis === true,
    ...(o.connection === undefined && bull?.connection !== undefined
      ? { bullModule: o.bullConfigKey !== undefined ? { configKey: o.bullConfigKey } : {} }
      : {}),
  };
}

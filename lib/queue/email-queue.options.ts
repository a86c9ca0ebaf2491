import type { ConfigurableModuleAsyncOptions } from '@nestjs/common';
import type { WorkerOptions } from 'bullmq';
import type { Redis, RedisOptions } from 'ioredis';
import type { EmailInput } from '../interfaces/email-input.interface.js';

/** Exponential backoff with jitter between attempts of a job. */
export interface EmailQueueBackoff {
  /** Delay before the second attempt, doubled for each further one. @default 1000 */
  delayMs?: number;
  /** Longest delay between two attempts. @default 60000 */
  maxDelayMs?: number;
}

/** How to reach Redis: a URL, ioredis options, or an ioredis client (duplicated, never closed by the queue). */
export type EmailQueueConnection = string | RedisOptions | Redis;

/** BullMQ `Worker` options the queue passes on as they are (it sets connection, prefix and concurrency itself). */
export type EmailQueueWorkerOptions = Partial<Omit<WorkerOptions, 'connection' | 'prefix' | 'concurrency'>>;

/** Options of `EmailQueueModule.forRoot`. */
export interface EmailQueueOptions {
  /**
   * A Redis URL (`redis://host:port/db`), ioredis options or an ioredis client. Leave it out to reuse the
   * connection (and prefix) of `@nestjs/bullmq`'s `BullModule.forRoot` (see `bullConfigKey`).
   */
  connection?: EmailQueueConnection;
  /** The `configKey` of the `BullModule.forRoot(configKey, ...)` to reuse when `connection` is left out. @default the default config */
  bullConfigKey?: string;
  /** The `name` of the `EmailModule` instance whose `EmailService` sends the jobs. @default the default instance */
  emailService?: string;
  /** BullMQ queue name (no `:`). @default 'email' */
  queueName?: string;
  /** Key prefix in Redis; on a Redis Cluster use a hash tag such as `{email}`. @default BullModule's prefix, else 'bull' */
  prefix?: string;
  /** True: this process runs a worker. False: it only queues. @default true */
  worker?: boolean;
  /** Jobs one worker process sends at once. @default 10 */
  concurrency?: number;
  /** Attempts per job, the first included. @default 8 */
  attempts?: number;
  /** Delays between attempts. */
  backoff?: EmailQueueBackoff;
  /**
   * Passed to BullMQ's `Worker` as they are (lockDuration, stalledInterval, ...). `maxStalledCount`
   * (default 1) is how many worker deaths a job survives; past it the job fails `EmailSendUncertainError`.
   */
  workerOptions?: EmailQueueWorkerOptions;
  /** How long finished jobs are kept, so that `status` and `waitFor` still answer. @default 7 days */
  keepSentForMs?: number;
  /** @default 30 days */
  keepFailedForMs?: number;
  /** The longest `app.close()` takes, whatever Redis does; jobs in flight get this long to finish. @default 30000 */
  closeTimeoutMs?: number;
  /** How long `send` waits for Redis to take a job before `EmailQueueUnavailableError`. @default 2000 */
  enqueueTimeoutMs?: number;
  /** The job name shown in dashboards (Bull Board). @default `email: <subject>` or `email: template <id>` */
  jobName?: (input: EmailInput) => string;
  /**
   * True: a Redis that would lose jobs (no AOF and no RDB snapshots, or an eviction policy other than
   * `noeviction`) is only logged, and the health indicator stays up. @default false (health says down)
   */
  allowVolatileRedis?: boolean;
}

/** Builds `EmailQueueOptions` in a class (`useClass` / `useExisting`). */
export interface EmailQueueOptionsFactory {
  createEmailQueueOptions(): EmailQueueOptions | Promise<EmailQueueOptions>;
}

/** Options of `EmailQueueModule.forRootAsync` (`imports`, `inject`, `useFactory` | `useClass` | `useExisting`). */
export type EmailQueueAsyncOptions = ConfigurableModuleAsyncOptions<
  EmailQueueOptions,
  'createEmailQueueOptions'
> & { isGlobal?: boolean };

/** Options with every default applied. */
export interface ResolvedEmailQueueOptions {
  readonly connection: EmailQueueConnection;
  readonly emailService?: string;
  readonly queueName: string;
  readonly prefix?: string;
  readonly worker: boolean;
  readonly concurrency: number;
  readonly attempts: number;
  readonly backoff: Required<EmailQueueBackoff>;
  readonly workerOptions: EmailQueueWorkerOptions;
  /** Worker deaths a job survives (BullMQ's `maxStalledCount`, counted by the queue itself). */
  readonly maxStalledCount: number;
  readonly keepSentForMs: number;
  readonly keepFailedForMs: number;
  readonly closeTimeoutMs: number;
  readonly enqueueTimeoutMs: number;
  readonly jobName: (input: EmailInput) => string;
  readonly allowVolatileRedis: boolean;
}

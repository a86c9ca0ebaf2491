import type { ModuleMetadata, Type } from '@nestjs/common';

/** Exponential backoff with jitter between attempts of a job. */
export interface EmailQueueBackoff {
  /** Delay before the second attempt, doubled for each further one. @default 1000 */
  delayMs?: number;
  /** Longest delay between two attempts. @default 60000 */
  maxDelayMs?: number;
}

/** Options of `EmailQueueModule.forRoot`. */
export interface EmailQueueOptions {
  /** A Redis URL (`redis://host:port/db`) or ioredis options. Required. */
  connection: string | Record<string, unknown>;
  /** BullMQ queue name (no `:`). @default 'email' */
  queueName?: string;
  /** Key prefix in Redis; on a Redis Cluster use a hash tag such as `{email}`. @default 'bull' */
  prefix?: string;
  /** True: this process runs a worker. False: it only queues. @default true */
  worker?: boolean;
  /** Jobs one worker process sends at once. @default 10 */
  concurrency?: number;
  /** Attempts per job, the first included. @default 8 */
  attempts?: number;
  /** Delays between attempts. */
  backoff?: EmailQueueBackoff;
  /** Passed to BullMQ's `Worker` as they are (lockDuration, stalledInterval, ...). */
  workerOptions?: Record<string, unknown>;
  /** How long finished jobs are kept, so that `status` and `waitFor` still answer. @default 7 days (sent), 30 days (failed) */
  keepSentForMs?: number;
  /** @default 30 days */
  keepFailedForMs?: number;
  /** How long `app.close()` waits for jobs in flight before it stops their worker. @default 30000 */
  closeTimeoutMs?: number;
  /** How long `send` waits for Redis to take a job before it fails. @default 10000 */
  enqueueTimeoutMs?: number;
}

/** Builds `EmailQueueOptions` in a class (`useClass` / `useExisting`). */
export interface EmailQueueOptionsFactory {
  createEmailQueueOptions(): EmailQueueOptions | Promise<EmailQueueOptions>;
}

/** Options of `EmailQueueModule.forRootAsync`. */
export interface EmailQueueAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  inject?: unknown[];
  useFactory?: (...args: never[]) => EmailQueueOptions | Promise<EmailQueueOptions>;
  useClass?: Type<EmailQueueOptionsFactory>;
  useExisting?: Type<EmailQueueOptionsFactory>;
}

/** Options with every default applied. */
export interface ResolvedEmailQueueOptions {
  readonly connection: string | Record<string, unknown>;
  readonly queueName: string;
  readonly prefix?: string;
  readonly worker: boolean;
  readonly concurrency: number;
  readonly attempts: number;
  readonly backoff: Required<EmailQueueBackoff>;
  readonly workerOptions: Record<string, unknown>;
  readonly keepSentForMs: number;
  readonly keepFailedForMs: number;
  readonly closeTimeoutMs: number;
  readonly enqueueTimeoutMs: number;
}

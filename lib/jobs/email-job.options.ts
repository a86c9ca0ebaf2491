import type { ConfigurableModuleAsyncOptions } from '@nestjs/common';

// The options the queue (`./queue`) and the outbox (`./outbox`) share: the same names, defaults, limits
// and messages on both engines, checked here once. Each engine's options file adds and checks only its own
// (the connection, the queue name, the engine's tuning) and prefixes every problem with its module's name.

/**
 * Exponential backoff with full jitter between attempts of a job (the job layer's own, on both engines).
 * @publicApi
 */
export interface EmailJobBackoff {
  /** The ceiling of the delay before the second attempt, doubled for each further one. @default 1000 */
  delayMs?: number;
  /** Longest delay between two attempts. @default 60000 */
  maxDelayMs?: number;
}

/**
 * The options every job engine takes (`EmailQueueOptions` and `EmailOutboxOptions` extend them).
 * @publicApi
 */
export interface EmailJobOptions {
  /** The `name` of the `EmailModule` instance whose `EmailService` sends the jobs. @default the default instance */
  emailService?: string;
  /** True: this process runs a worker. False: it only enqueues. @default true */
  worker?: boolean;
  /** Jobs one worker process sends at once (at least 1). @default 10 */
  concurrency?: number;
  /** Attempts per job, the first included (at least 1). @default 8 */
  attempts?: number;
  /** Delays between attempts. */
  backoff?: EmailJobBackoff;
  /**
   * How long a sent job's record is kept (at least 1000): `status` and `waitFor` answer, and its job id
   * stays one email, for this long. @default 7 days
   */
  keepSentForMs?: number;
  /** How long a failed or cancelled job's record is kept (at least 1000). @default 30 days */
  keepFailedForMs?: number;
  /** The longest `app.close()` takes, whatever the store does; jobs in flight get this long to finish. @default 30000 */
  closeTimeoutMs?: number;
  /**
   * The longest `send`, `status`, `cancel` and `reschedule` take when the store (Redis, PostgreSQL) does
   * not answer (at least 1); past it they fail with the engine's unavailable error
   * (`EmailQueueUnavailableError`, `EmailOutboxUnavailableError`). @default 10000
   */
  commandTimeoutMs?: number;
}

/**
 * The shared options with every default applied.
 * @publicApi
 */
export interface ResolvedEmailJobOptions {
  readonly emailService?: string;
  readonly worker: boolean;
  readonly concurrency: number;
  readonly attempts: number;
  readonly backoff: Required<EmailJobBackoff>;
  readonly keepSentForMs: number;
  readonly keepFailedForMs: number;
  readonly closeTimeoutMs: number;
  readonly commandTimeoutMs: number;
}

/**
 * The options of a job engine's `forRootAsync` (`imports`, `inject`, `useFactory` | `useClass` | `useExisting`,
 * `isGlobal`): `EmailQueueAsyncOptions`, `EmailOutboxAsyncOptions`.
 */
export type JobModuleAsyncOptions<O, FactoryMethod extends string> = ConfigurableModuleAsyncOptions<
  O,
  FactoryMethod
> & { isGlobal?: boolean };

const DAY_MS = 86_400_000;

/** The defaults of the shared options. */
const JOB_OPTION_DEFAULTS = {
  worker: true,
  concurrency: 10,
  attempts: 8,
  backoff: { delayMs: 1000, maxDelayMs: 60_000 },
  keepSentForMs: 7 * DAY_MS,
  keepFailedForMs: 30 * DAY_MS,
  closeTimeoutMs: 30_000,
  commandTimeoutMs: 10_000,
} as const;

/**
 * The least each time option takes, in milliseconds. Retention is at least a second: both engines keep
 * their own rows in whole seconds (BullMQ's `age`, pg-boss's `deleteAfterSeconds`), and a record kept for
 * less would let a job id be a second email, and `waitFor` miss the result, as soon as the job ended. A
 * command timeout of 0 would fail every store call at once.
 */
const JOB_TIME_MINIMUMS = {
  'backoff.delayMs': 0,
  'backoff.maxDelayMs': 0,
  keepSentForMs: 1000,
  keepFailedForMs: 1000,
  closeTimeoutMs: 0,
  commandTimeoutMs: 1,
} as const;

/** A value as a message shows it. */
export const showOption = (value: unknown): string =>
  typeof value === 'string' ? JSON.stringify(value) : String(value);

/** The problem of a count option (an integer of at least `min`), or undefined when it is right. */
export function countProblem(name: string, value: unknown, min: number): string | undefined {
  if (Number.isSafeInteger(value) && (value as number) >= min) return undefined;
  return `${name} must be an integer of at least ${min} (got ${showOption(value)})`;
}

/** The problem of a time option (a number of milliseconds of at least `min`), or undefined when it is right. */
export function msProblem(name: string, value: unknown, min: number): string | undefined {
  if (typeof value === 'number' && Number.isFinite(value) && value >= min) return undefined;
  return `${name} must be a number of milliseconds >= ${min} (got ${showOption(value)})`;
}

/**
 * Checks the shared options and applies their defaults; each problem is pushed to `problems` (one line
 * each, naming the option and what it got), and what comes back is only meaningful when none was.
 */
export function resolveJobOptions(o: Partial<EmailJobOptions>, problems: string[]): ResolvedEmailJobOptions {
  const d = JOB_OPTION_DEFAULTS;
  if (o.emailService !== undefined && (typeof o.emailService !== 'string' || o.emailService.trim() === ''))
    problems.push(
      `emailService must be the name of an EmailModule instance (got ${showOption(o.emailService)})`,
    );
  if (o.worker !== undefined && typeof o.worker !== 'boolean')
    problems.push(`worker must be true or false (got ${showOption(o.worker)})`);
  const counts = { concurrency: o.concurrency ?? d.concurrency, attempts: o.attempts ?? d.attempts };
  for (const [name, value] of Object.entries(counts)) {
    const problem = countProblem(name, value, 1);
    if (problem !== undefined) problems.push(problem);
  }
  if (o.backoff !== undefined && (typeof o.backoff !== 'object' || o.backoff === null))
    problems.push(`backoff must be an object { delayMs, maxDelayMs } (got ${showOption(o.backoff)})`);
  const backoff = {
    delayMs: o.backoff?.delayMs ?? d.backoff.delayMs,
    maxDelayMs: o.backoff?.maxDelayMs ?? d.backoff.maxDelayMs,
  };
  const times: Record<keyof typeof JOB_TIME_MINIMUMS, number> = {
    'backoff.delayMs': backoff.delayMs,
    'backoff.maxDelayMs': backoff.maxDelayMs,
    keepSentForMs: o.keepSentForMs ?? d.keepSentForMs,
    keepFailedForMs: o.keepFailedForMs ?? d.keepFailedForMs,
    closeTimeoutMs: o.closeTimeoutMs ?? d.closeTimeoutMs,
    commandTimeoutMs: o.commandTimeoutMs ?? d.commandTimeoutMs,
  };
  for (const [name, value] of Object.entries(times)) {
    const problem = msProblem(name, value, JOB_TIME_MINIMUMS[name as keyof typeof JOB_TIME_MINIMUMS]);
    if (problem !== undefined) problems.push(problem);
  }
  return {
    ...(o.emailService !== undefined ? { emailService: o.emailService } : {}),
    worker: o.worker ?? d.worker,
    ...counts,
    backoff,
    keepSentForMs: times.keepSentForMs,
    keepFailedForMs: times.keepFailedForMs,
    closeTimeoutMs: times.closeTimeoutMs,
    commandTimeoutMs: times.commandTimeoutMs,
  };
}

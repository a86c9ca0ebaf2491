/**
 * THE decisions of a job's life, on both engines (the queue's BullMQ and the outbox's pg-boss): whether an
 * attempt may start, what a failed attempt leads to, whether a job may still be cancelled or moved. Plain
 * values in, plain values out; `jobs/` applies them and the engine adapters carry them out. See
 * docs/jobs.md for the rules as users read them.
 */
import type { EmailJobRecord } from '../interfaces/email-job.interface.js';
import { backoffDelay, retryAfterPauseMs, type Outcome } from './delivery.policy.js';

/** Statuses after which no job attempt can succeed: the job ends at once (with validation errors). */
export const JOB_FINAL_STATUSES: ReadonlySet<number> = new Set([400, 401, 403]);

/** A job's states as the module keeps them (`delayed`, which users also see, is a `waiting` job due later). */
export type JobState = EmailJobRecord['state'];

/**
 * Who moves a job: `write` (`send`, `sendMany`), the `engine` (BullMQ, pg-boss: a worker takes the job, or the
 * engine takes it back from a worker that died), a `worker` (the attempt's outcome), `cancel` and `reschedule`.
 */
export type JobMover = 'write' | 'engine' | 'worker' | 'cancel' | 'reschedule';

/** One move of a job: from a state (null: a new job) to another, by whom, and when. */
export interface JobMove {
  readonly from: JobState | null;
  readonly to: JobState;
  readonly by: JobMover;
  readonly when: string;
}

/**
 * THE job state transition table: every move a job can make, on both engines. The code makes each move through
 * `moveJob`, which refuses one that is not here; docs/jobs.md prints this table
 * (`test/jobs/jobs.transitions.spec.ts` checks both). `sent`, `failed` and `cancelled` are final.
 */
export const JOB_MOVES: readonly JobMove[] = [
  {
    from: null,
    to: 'waiting',
    by: 'write',
    when: 'the job is written (in your transaction, with the outbox)',
  },
  { from: 'waiting', to: 'active', by: 'engine', when: 'a worker takes it, once it is due' },
  {
    from: 'active',
    to: 'sent',
    by: 'worker',
    when: 'the service took the email (or replayed it for its key)',
  },
  {
    from: 'active',
    to: 'waiting',
    by: 'worker',
    when: 'an attempt failed and another may follow (its backoff), or none started: a 429, no room in its account, not due yet, the worker closing',
  },
  {
    from: 'active',
    to: 'failed',
    by: 'worker',
    when: 'a final error, or its attempts (or worker deaths) ran out: uncertain when one may have been accepted',
  },
  {
    from: 'active',
    to: 'waiting',
    by: 'engine',
    when: 'its worker died or timed out mid-attempt: the next attempt counts it and sends with the same key',
  },
  {
    from: 'waiting',
    to: 'cancelled',
    by: 'cancel',
    when: 'no attempt of it may have reached the service (in your transaction, with the outbox)',
  },
  { from: 'waiting', to: 'waiting', by: 'reschedule', when: 'its next attempt moves earlier or later' },
];

/** The move of `from` to `to` by `by`, or undefined when the table has none. */
export function jobMoveOf(from: JobState | null, to: JobState, by: JobMover): JobMove | undefined {
  return JOB_MOVES.find((m) => m.from === from && m.to === to && m.by === by);
}

/**
 * `record` moved to `to` by `by`, with `changes`: the one way the job layer changes a job's state.
 * @throws Error for a move the table does not have (a fault of the module, never of the caller's input)
 */
export function moveJob<R extends { state: JobState | null }>(
  record: R,
  to: JobState,
  by: JobMover,
  changes: Partial<Omit<R, 'state'>> = {},
): Omit<R, 'state'> & { state: JobState } {
  if (jobMoveOf(record.state, to, by) === undefined)
    throw new Error(
      `a job cannot move from ${record.state} to ${to} by ${by} (policy/job.policy.ts: JOB_MOVES)`,
    );
  return { ...record, ...changes, state: to };
}

/**
 * A worker whose attempt could not be written (its store failed under it: a restart, a failover) gives the job
 * back to start `retryMs` later, trying for `giveUpMs` while the store does not answer (past that, the engine
 * takes the job back on its own: BullMQ's stalled check, pg-boss's expiry). One rule for both engines.
 */
export const JOB_STORE_FAILURE = { retryMs: 1000, giveUpMs: 30_000 } as const;

/**
 * The part of `closeTimeoutMs` a closing worker keeps for itself after its jobs in flight had their time: to drop
 * its connections or give those jobs back. One rule for both engines.
 */
export function closeSpareMs(closeTimeoutMs: number): number {
  return Math.min(1000, closeTimeoutMs / 10);
}

/** What the table needs to know of any failure, whoever met it (the loop, `sendMany`, a job attempt). */
export interface FailureFacts {
  /** One of the module's own errors (`EmailError`); anything else is a fault we cannot read. */
  ours: boolean;
  /** The error's `outcome`, when it carries one. */
  outcome?: Outcome;
  /** A 429, or the module's own `rateLimit` budget without room for now: a wait cures it. */
  rateLimited: boolean;
  retryAfterMs?: number;
  /** No attempt can ever succeed: the input breaks a rule, 400/401/403, or it is larger than a whole budget. */
  final: boolean;
  /**
   * The module's own budget had no room for now (no request was made; not a 429, not an account's pause):
   * room comes back at the end of a window.
   */
  budgetFull?: boolean;
}

/**
 * Whether a message may exist after this failure. Only our own error saying `not-sent` proves that none
 * does; a fault we cannot read may have come after the request went out, so it may have been accepted.
 */
export function mayHaveCreated(f: Pick<FailureFacts, 'ours' | 'outcome'>): boolean {
  return !(f.ours && f.outcome === 'not-sent');
}

/** The wait before a job's next attempt (`attemptsMade` >= 1): the loop's full jitter on the job's schedule. */
export function jobBackoffDelay(
  attemptsMade: number,
  backoff: { delayMs: number; maxDelayMs: number },
  random: () => number = Math.random,
): number {
  return backoffDelay(attemptsMade - 1, random, { baseMs: backoff.delayMs, maxMs: backoff.maxDelayMs });
}

/** What a job may do, set by its module's options. */
export interface JobLimits {
  maxAttempts: number;
  /** Worker deaths a job survives; past it the job fails uncertain. */
  maxInterruptions: number;
  backoff: { delayMs: number; maxDelayMs: number };
}

/** What an engine's delivery of a job leads to, before any attempt. */
export type ClaimPlan =
  /** The job was cancelled (or had ended): nothing to send (an engine's stale or repeated delivery). */
  | { next: 'drop' }
  /** Not yet (rescheduled later): give it back to the engine for `atMs`, no attempt spent. */
  | { next: 'later'; atMs: number }
  /** No attempt may start any more: end the job (uncertain when an attempt may have been accepted). */
  | { next: 'end'; record: EmailJobRecord; asUncertain: boolean }
  /** Start an attempt; `record` is the job as it stands during it (`active`, the attempt counted). */
  | { next: 'run'; record: EmailJobRecord };

/**
 * Whether an engine's delivery of `job` (its record as last written) may start an attempt now. `interrupted`: the
 * deliveries of it that started and never recorded their end since then (a worker that died or was cut off, as the
 * engine counted them): each may have reached the service, so the job is uncertain from then on, and each counts
 * as an attempt.
 */
export function claimPlan(
  job: EmailJobRecord,
  interrupted: number,
  now: number,
  limits: JobLimits,
): ClaimPlan {
  if (job.state !== 'waiting') return { next: 'drop' };
  if (interrupted === 0 && job.runAt > now) return { next: 'later', atMs: job.runAt };
  const record: EmailJobRecord = moveJob(job, 'active', 'engine', {
    attempts: job.attempts + interrupted,
    interruptions: job.interruptions + interrupted,
    uncertain: job.uncertain || interrupted > 0,
  });
  if (record.interruptions > limits.maxInterruptions || record.attempts >= limits.maxAttempts)
    return { next: 'end', record, asUncertain: record.uncertain };
  return { next: 'run', record: { ...record, attempts: record.attempts + 1 } };
}

/** What follows a failed attempt. */
export type AttemptPlan =
  /**
   * A 429 or no room in a budget: give the job back until `atMs`, no attempt spent. `pauses` says who waits:
   * the whole engine (a job without account: every job of the queue, where the engine can), or the job's
   * account alone (its limiter pauses it in every process; the engine goes on with other accounts' jobs),
   * whose job then comes back at the window's end (`budgetFull`) or at a slot in the account's line.
   */
  | {
      next: 'pause';
      atMs: number;
      pauseMs: number;
      uncertain: boolean;
      pauses: 'engine' | 'account';
      budgetFull: boolean;
    }
  /** Try again at `atMs`. */
  | { next: 'retry'; atMs: number; uncertain: boolean }
  /** End the job; `asUncertain` when it ends `EmailSendUncertainError` because an attempt may have been accepted. */
  | { next: 'fail'; uncertain: boolean; asUncertain: boolean };

/**
 * What a failed attempt of `job` (already counted in `job.attempts`) leads to. A job that may have been
 * accepted by any attempt can only end sent or uncertain, never `not-sent`.
 */
export function attemptPlan(
  f: FailureFacts,
  job: Pick<EmailJobRecord, 'attempts' | 'uncertain' | 'account'>,
  limits: JobLimits,
  now: number,
  random: () => number = Math.random,
): AttemptPlan {
  const uncertain = job.uncertain || mayHaveCreated(f);
  if (f.rateLimited && !f.final) {
    const pauseMs = retryAfterPauseMs(f.retryAfterMs);
    const pauses = job.account === undefined ? 'engine' : 'account';
    return {
      next: 'pause',
      atMs: now + pauseMs,
      pauseMs,
      uncertain,
      pauses,
      budgetFull: f.budgetFull === true,
    };
  }
  if (f.final || job.attempts >= limits.maxAttempts)
    return { next: 'fail', uncertain, asUncertain: uncertain };
  return { next: 'retry', atMs: now + jobBackoffDelay(job.attempts, limits.backoff, random), uncertain };
}

/**
 * Whether a job may still be cancelled: it waits, and no attempt of it may have reached the service (so
 * "cancelled" can never stand beside an email that exists). Each engine asks it in one atomic step of its store
 * (a script on Redis, a conditional `UPDATE` on PostgreSQL), with `uncertain` as that store knows it then.
 */
export function mayCancel(job: Pick<EmailJobRecord, 'state' | 'uncertain'>): boolean {
  return (
    job.state === 'waiting' && !job.uncertain && jobMoveOf('waiting', 'cancelled', 'cancel') !== undefined
  );
}

/** Whether a job's next attempt may still be moved: it waits (no attempt runs now). */
export function mayReschedule(job: Pick<EmailJobRecord, 'state'>): boolean {
  return job.state === 'waiting' && jobMoveOf('waiting', 'waiting', 'reschedule') !== undefined;
}

/** How long a job's record is kept: `keepSentForMs` after it was sent, `keepFailedForMs` after it failed or was cancelled, and while it waits, until `keepFailedForMs` after its start. */
export function keepRecordUntil(
  job: Pick<EmailJobRecord, 'state' | 'runAt' | 'finishedAt'>,
  keep: { sentMs: number; failedMs: number },
  now: number,
): number {
  if (job.state === 'sent') return (job.finishedAt ?? now) + keep.sentMs;
  if (job.state === 'failed' || job.state === 'cancelled') return (job.finishedAt ?? now) + keep.failedMs;
  return Math.max(job.runAt, now) + keep.failedMs;
}

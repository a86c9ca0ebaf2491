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

/** How long an attempt waits before looking again at a job another transaction holds (outbox cancel racing). */
export const JOB_HELD_RETRY_MS = 250;

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
  /** The job already ended, or was cancelled: nothing to send (an engine's stale or repeated delivery). */
  | { next: 'drop' }
  /** Not yet (rescheduled later): give it back to the engine for `atMs`, no attempt spent. */
  | { next: 'later'; atMs: number }
  /** No attempt may start any more: end the job (uncertain when an attempt may have been accepted). */
  | { next: 'end'; record: EmailJobRecord; asUncertain: boolean }
  /** Start an attempt; `record` is the job as it stands during it. */
  | { next: 'run'; record: EmailJobRecord };

/**
 * Whether an engine's delivery of `job` may start an attempt now. A job found `active` was left by an
 * attempt that never recorded its end (its worker died or was cut off): that attempt may have been
 * accepted, so the job is uncertain from then on.
 */
export function claimPlan(job: EmailJobRecord, now: number, limits: JobLimits): ClaimPlan {
  if (job.state !== 'waiting' && job.state !== 'active') return { next: 'drop' };
  const interrupted = job.state === 'active';
  if (!interrupted && job.runAt > now) return { next: 'later', atMs: job.runAt };
  const record: EmailJobRecord = {
    ...job,
    interruptions: job.interruptions + (interrupted ? 1 : 0),
    uncertain: job.uncertain || interrupted,
  };
  if (record.interruptions > limits.maxInterruptions || record.attempts >= limits.maxAttempts)
    return { next: 'end', record, asUncertain: record.uncertain };
  return { next: 'run', record: { ...record, state: 'active', attempts: record.attempts + 1 } };
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
 * "cancelled" can never stand beside an email that exists).
 */
export function mayCancel(job: Pick<EmailJobRecord, 'state' | 'uncertain'>): boolean {
  return job.state === 'waiting' && !job.uncertain;
}

/** Whether a job's next attempt may still be moved: it waits (no attempt runs now). */
export function mayReschedule(job: Pick<EmailJobRecord, 'state'>): boolean {
  return job.state === 'waiting';
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

import type { EmailJobRecord } from '../interfaces/email-job.interface.js';
import type { NewEmailJob } from './email-job.rules.js';

/** A job's record as the store holds it now, with the token that `replace` compares. */
export interface HeldJob {
  record: EmailJobRecord;
  /** Opaque: changes whenever the record changes. */
  token: string;
}

/**
 * One engine behind the job layer: BullMQ on Redis (`./queue`) or pg-boss on PostgreSQL (`./outbox`). It
 * keeps each job's record (`EmailJobRecord`, the truth about the job, kept for `keepSentForMs` whatever the
 * engine does with its own rows) and the engine's job that wakes a worker for it. `Tx` is the caller's
 * transaction where the engine has one (the outbox), else never given.
 */
export interface EmailJobBackend<O, Tx> {
  /** The parts every job key is derived from, before the job id (the same in every process). */
  readonly keyScope: readonly string[];
  /**
   * Writes the records and their engine jobs (in `tx` when given). A job id the store already keeps is
   * left as it is: its record comes back in that job's place, `null` where the job was written.
   */
  write(jobs: ReadonlyArray<NewEmailJob<O>>, tx?: Tx): Promise<Array<HeldJob | null>>;
  /**
   * The record of a job id, or null; in `tx` as that transaction sees it, never locked (a call that finds the job
   * too late must not hold the worker's row for the rest of the app's transaction: `replace` locks what it changes).
   */
  read(jobId: string, tx?: Tx): Promise<HeldJob | null>;
  /**
   * Replaces `held` by `next` if it has not changed since it was read (and, outside a transaction, no other
   * transaction holds it). False otherwise: read it again.
   */
  replace(held: HeldJob, next: EmailJobRecord, tx?: Tx): Promise<boolean>;
  /**
   * Optional: the token `next` holds once `replace(held, next)` succeeded, where the store can tell without
   * reading it (a version number). An attempt then records its outcome with one compare-and-set against it;
   * without it (or when that fails), the outcome is recorded after reading the record again.
   */
  tokenAfter?(held: HeldJob): string;
  /** Moves the engine's job of a waiting job to start at `atMs` (after `reschedule`), or drops it (after `cancel`). */
  moveEngineJob(record: EmailJobRecord, atMs: number | 'cancelled', tx?: Tx): Promise<void>;
  /** The engine's error for a store that did not answer (`EmailQueueUnavailableError`, `EmailOutboxUnavailableError`). */
  unavailable(what: string, cause: unknown, jobIds?: readonly string[], mayLand?: boolean): Error;
}

/** What one delivery of a job by its engine comes to; the engine adapter carries it out. */
export type JobVerdict =
  /** Sent: the engine completes its job. */
  | { kind: 'sent'; record: unknown }
  /** Give the job back to start again at `atMs`, no attempt spent; `pauseMs`: a 429 that pauses every job. */
  | { kind: 'later'; atMs: number; pauseMs?: number }
  /** The attempt failed; the next one starts at `atMs`. */
  | { kind: 'retry'; atMs: number; error: Error }
  /** The job ended without an email (or uncertain): the engine fails its job. */
  | { kind: 'failed'; error: Error }
  /** Nothing to do: the job had ended or was cancelled already (a stale or repeated delivery). */
  | { kind: 'dropped' };

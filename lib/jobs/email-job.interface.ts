import type { EmailJobRecord } from '../interfaces/email-job.interface.js';
import type { EmailLog } from '../interfaces/email-records.interface.js';
import type { NewEmailJob } from './email-job.rules.js';

/** A job's record as the store holds it now, with the token that `replace` compares. */
export interface HeldJob {
  record: EmailJobRecord;
  /** Opaque: changes whenever the engine's job changes. */
  token: string;
}

/**
 * What an engine keeps of a job in its own job's data (BullMQ's job `data`, pg-boss's `data` column): the record
 * but its message record and end (which the engine keeps as its job's output and finish time), and `takenBack`,
 * the engine's own count of the times it took the job back from a worker, as of this write. Written with the job,
 * then only when something the engine cannot tell changes: an attempt that failed, a cancel, a reschedule.
 */
export type StoredEmailJob = Omit<EmailJobRecord, 'record' | 'finishedAt'> & { takenBack: number };

/** What the engine itself says of a job, beside its data. */
export interface EngineFacts {
  /** Where the engine holds it (BullMQ has no `cancelled`: its cancelled jobs end `failed`, their data says why). */
  state: 'waiting' | 'active' | 'completed' | 'failed' | 'cancelled';
  /** When a waiting job is due, as the engine holds it (ms); the record's `runAt` when the engine does not say. */
  dueAt?: number;
  /** Times the engine took the job back from a worker that died or timed out, in all. */
  takenBack: number;
  /** When it completed or failed (ms). */
  finishedAt?: number;
  /** A completed job's output: its message record. */
  output?: unknown;
}

/**
 * One engine behind the job layer: BullMQ on Redis (`./queue`) or pg-boss on PostgreSQL (`./outbox`). Each job's
 * record lives in the engine's own job (`StoredEmailJob` as its data, the engine's state and output beside it),
 * kept by the engine's retention for `keepSentForMs` and `keepFailedForMs`: one write per change of a job's state.
 * `Tx` is the caller's transaction where the engine has one (the outbox), else never given.
 */
export interface EmailJobBackend<O, Tx> {
  /** The parts every job key is derived from, before the job id (the same in every process). */
  readonly keyScope: readonly string[];
  /**
   * Writes the jobs (in `tx` when given). A job id the engine already keeps is left as it is: its record comes
   * back in that job's place, `null` where the job was written.
   */
  write(jobs: ReadonlyArray<NewEmailJob<O>>, tx?: Tx): Promise<Array<HeldJob | null>>;
  /**
   * The record of a job id, or null; in `tx` as that transaction sees it, never locked (a call that finds the job
   * too late must not hold the worker's row for the rest of the app's transaction: `replace` locks what it changes).
   */
  read(jobId: string, tx?: Tx): Promise<HeldJob | null>;
  /**
   * Replaces a waiting job's record by `next` (cancelled, or due at another time: the engine moves its own job to
   * match) if the job has not changed since `held` was read and no worker has taken it. False otherwise: read it
   * again. In `tx`, the change commits or rolls back with it.
   */
  replace(held: HeldJob, next: EmailJobRecord, tx?: Tx): Promise<boolean>;
  /** The engine's error for a store that did not answer (`EmailQueueUnavailableError`, `EmailOutboxUnavailableError`). */
  unavailable(what: string, cause: unknown, jobIds?: readonly string[], mayLand?: boolean): Error;
}

/** A job an engine handed this process's worker (the engine counts it `active` from then on). */
export interface DeliveredJob {
  /** The record as last written (`waiting`, or `cancelled` by a cancel that came first). */
  record: EmailJobRecord;
  /** The times the engine took it back from a worker since the record was written: attempts cut off. */
  interrupted: number;
  /**
   * Writes `record` while this worker holds the job, its state as it is (the tag of an account's key before the
   * first send under it). Rare: the outcome is the verdict's one write.
   */
  keep(record: EmailJobRecord): Promise<void>;
}

/** What one delivery of a job by its engine comes to; the engine's worker writes it in one step. */
export type JobVerdict =
  /** Sent: the engine completes its job with `log` as its output. */
  | { kind: 'sent'; log: EmailLog }
  /** Give the job back to start again at `atMs`, nothing written but its start; `pauseMs`: a 429 that pauses every job. */
  | { kind: 'later'; atMs: number; pauseMs?: number }
  /** The attempt failed; `record` (its attempts, uncertainty and error) is written, the next attempt starts at `atMs`. */
  | { kind: 'retry'; atMs: number; record: EmailJobRecord; error: Error }
  /** The job ended without an email (or uncertain): the engine fails its job, `record` written. */
  | { kind: 'failed'; record: EmailJobRecord; error: Error }
  /** Nothing to send: a cancel came first (the engine ends its job as cancelled). */
  | { kind: 'dropped' };

import type { EmailJobRecord } from '../interfaces/email-job.interface.js';
import type { HeldJob } from '../jobs/email-job.interface.js';

/** How a taken job ended, for pg-boss's job row: sent (its record), failed (the error), or dropped (null). */
export type EngineOutcome = { record: unknown } | { error: Error } | null;

/**
 * A job as `fetchWithRecords` hands it over: pg-boss's id and data, and the job's record (null: none;
 * undefined: not read with it, read it apart).
 */
export interface FetchedWithRecord {
  id: string;
  data: { jobId: string };
  held?: HeldJob | null;
}

/**
 * The worker's send slots, as the backend sees an attempt go by: `sendStarting` once a claim is written
 * (resolves when a slot is free), `sendEnded` when the attempt's outcome is about to be written.
 */
export interface OutboxSendSlots {
  sendStarting(jobId: string): Promise<void>;
  sendEnded(jobId: string): void;
  /** pg-boss's id of the job this worker took for `jobId` (undefined: it runs none). */
  takenId(jobId: string): string | undefined;
}

/** A compare-and-set waiting for the next statement (see `OutboxReplaces`). */
export interface PendingReplace {
  held: HeldJob;
  next: EmailJobRecord;
  resolve: (changed: boolean) => void;
  reject: (err: unknown) => void;
}

import type { EmailInput } from './email-input.interface.js';
import type { EmailLog } from './email-records.interface.js';

/**
 * Where a job stands, as `status` reports it on both engines (the queue and the outbox).
 * @publicApi
 */
export type EmailJobState = 'waiting' | 'delayed' | 'active' | 'sent' | 'failed' | 'cancelled';

/**
 * An error as a job keeps it: its class name and own fields (never a secret: errors hold none).
 * @publicApi
 */
export interface StoredJobError {
  name: string;
  message: string;
  outcome?: string;
  fields: Record<string, unknown>;
}

/**
 * What the module keeps of a job, whatever its engine does with its own rows (BullMQ removes finished jobs,
 * pg-boss archives and deletes them): the job id's one email, its input and its progress. Kept until
 * `keepSentForMs` (or `keepFailedForMs`) after the job ended, so a reused job id is refused or answered
 * for that long. Plain JSON: both engines store it as text.
 */
export interface EmailJobRecord {
  jobId: string;
  idempotencyKey: string;
  /** SHA-256 of the input (with `defaultFrom` applied): the same job id with another input is a conflict. */
  fingerprint: string;
  input: EmailInput;
  /** The account the job sends for (`{ account }`): its key is resolved at each attempt, never stored. */
  account?: string;
  /**
   * A tag of the account key the last attempt that may have been accepted used (an HMAC under the key,
   * never the key): an attempt under another key after it does not count on the service's replay.
   */
  keyTag?: string;
  /** The W3C trace context of the request that queued the job. */
  trace?: { traceparent: string; tracestate?: string };
  /** The module's own states: `waiting` covers delayed jobs (`runAt` in the future). */
  state: 'waiting' | 'active' | 'sent' | 'failed' | 'cancelled';
  /** Epoch ms before which no attempt starts. */
  runAt: number;
  /** Attempts started (an attempt given back after a 429 is not one). */
  attempts: number;
  /** Attempts whose worker died or was cut off before it could record how they ended. */
  interruptions: number;
  /** An attempt may have been accepted by the service: the job can only end sent or uncertain. */
  uncertain: boolean;
  /** The message record (as JSON) once sent. */
  record?: unknown;
  /** The final error once failed, else the last attempt's error. */
  error?: StoredJobError;
  createdAt: number;
  finishedAt?: number;
}

/**
 * The state of a queued or enqueued send, as `status` reports it on both engines.
 * @publicApi
 */
export interface EmailJobStatus {
  jobId: string;
  idempotencyKey: string;
  state: EmailJobState;
  /** Attempts started (a 429 given back is not one). */
  attempts: number;
  /** When the next attempt may start, while the job waits. */
  runAt?: Date;
  messageId?: number;
  /** The message record once sent (dates as `Date`, as `EmailService` returns it). */
  record?: EmailLog;
  error?: { name: string; message: string; outcome?: string };
}

/**
 * What `cancel` did: `cancelled: false` with the job's `state` when it was too late (`null`: no such job).
 * @publicApi
 */
export type EmailJobCancelResult = { cancelled: true } | { cancelled: false; state: EmailJobState | null };

/**
 * What `reschedule` did, as `cancel` answers.
 * @publicApi
 */
export type EmailJobRescheduleResult =
  { rescheduled: true } | { rescheduled: false; state: EmailJobState | null };

/**
 * When a rescheduled job may start: after `delayMs` from now, or `at` a given time.
 * @publicApi
 */
export type EmailJobSchedule = { delayMs: number } | { at: Date };

/**
 * A queued or enqueued send.
 * @publicApi
 */
export interface EmailJobReceipt {
  jobId: string;
  idempotencyKey: string;
}

/**
 * Events of this process's worker, for logs and metrics (the same on both engines).
 * @publicApi
 */
export interface EmailJobEvents {
  sent: (job: { jobId: string; idempotencyKey: string; record: EmailLog }) => void;
  failed: (job: { jobId: string; idempotencyKey: string; error: Error; final: boolean }) => void;
  rateLimited: (info: { jobId: string; retryAfterMs: number }) => void;
}

import { createHash } from 'node:crypto';
import { isValidIdempotencyKey, type SendOutcome } from 'nestjs-transactional-email';

/**
 * Where a job is:
 * - `queued`: waiting for its first attempt;
 * - `retrying`: an attempt failed and no message can exist (`outcome: 'not-sent'`); tried again later;
 * - `uncertain`: an attempt may have created the message; looked up, then tried again with the same key;
 * - `sent`: a message record exists (`messageId`);
 * - `failed`: given up (a permanent error, or attempts ran out).
 */
export type NotificationJobStatus = 'queued' | 'retrying' | 'uncertain' | 'sent' | 'failed';

/** A welcome notification waiting to be emailed. */
export interface NotificationJob {
  id: string;
  to: string;
  name: string;
  status: NotificationJobStatus;
  /** Derived from `id`, so every attempt of this job carries the same key. */
  idempotencyKey: string;
  attempts: number;
  createdAt: Date;
  /** When the processor may pick it up next; null once it is finished. */
  nextAttemptAt: Date | null;
  messageId: number | null;
  /** How the message was confirmed: by a send, or by finding it in the message log. */
  confirmedBy: 'send' | 'lookup' | null;
  lastError: { name: string; message: string; outcome?: SendOutcome } | null;
}

/**
 * The Idempotency-Key of a job: `notification:<jobId>` when that fits the service's pattern
 * (16 to 128 of letters, digits, `_`, `:`, `-`), otherwise `notification:sha256:<hash of jobId>`.
 * Either way it depends on the job id only, so a job never gets a second key.
 *
 * @example
 * idempotencyKeyForJob('5f0c2a4e-...'); // 'notification:5f0c2a4e-...'
 * idempotencyKeyForJob('42');          // 'notification:sha256:73475cb4...'
 */
export function idempotencyKeyForJob(jobId: string): string {
  const plain = `notification:${jobId}`;
  if (isValidIdempotencyKey(plain)) return plain;
  return `notification:sha256:${createHash('sha256').update(jobId).digest('hex').slice(0, 40)}`;
}

import type { EmailLog } from '../interfaces/email-records.interface.js';

/** Options of `EmailQueue.send`. */
export interface QueueSendOptions {
  /** Job id: the same id queued twice is one job and one email. @default a random id */
  jobId?: string;
  /** Wait this long before the first attempt. */
  delayMs?: number;
  /** BullMQ priority (1 is the highest). */
  priority?: number;
}

/** A queued send. */
export interface QueuedEmail {
  jobId: string;
  idempotencyKey: string;
}

/** What a job holds in Redis (the same shape the outbox keeps in PostgreSQL). */
export type { EmailJobData } from '../jobs/email-job.interface.js';

/** State of a queued send, as `EmailQueue.status` reports it. */
export interface EmailJobStatus {
  jobId: string;
  idempotencyKey: string;
  state: 'waiting' | 'delayed' | 'active' | 'sent' | 'failed';
  attempts: number;
  messageId?: number;
  /** The message record once sent (dates as `Date`, as `EmailService` returns it). */
  record?: EmailLog;
  error?: { name: string; message: string; outcome?: string };
}

/** Events of the queue's worker in this process, for logs and metrics. */
export interface EmailQueueEvents {
  sent: (job: { jobId: string; idempotencyKey: string; record: EmailLog }) => void;
  failed: (job: { jobId: string; idempotencyKey: string; error: Error; final: boolean }) => void;
  rateLimited: (info: { jobId: string; retryAfterMs: number }) => void;
}

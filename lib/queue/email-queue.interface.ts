import type { EmailJobEvents, EmailJobReceipt } from '../interfaces/email-job.interface.js';

/** Options of `EmailQueue.send`. */
export interface QueueSendOptions {
  /** Job id: the same id queued twice is one job and one email (for `keepSentForMs`). @default a random id */
  jobId?: string;
  /** Wait this long before the first attempt. */
  delayMs?: number;
  /** BullMQ priority (1 is the highest). */
  priority?: number;
  /** The account the job sends for (the `accounts` resolver finds its key at each attempt; only its id is stored). */
  account?: string;
}

/** A queued send. */
export type QueuedEmail = EmailJobReceipt;

/** Events of the queue's worker in this process, for logs and metrics. */
export type EmailQueueEvents = EmailJobEvents;

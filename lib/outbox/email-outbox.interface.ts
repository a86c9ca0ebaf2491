import type { EmailJobData } from '../jobs/email-job.interface.js';
import type { EmailLog } from '../interfaces/email-records.interface.js';

/**
 * The transaction the app already holds, in any form `EmailOutbox.send` accepts: a `pg` client after BEGIN,
 * a TypeORM `EntityManager` or `QueryRunner`, a MikroORM `EntityManager`, a Knex, Kysely or Drizzle
 * transaction, or a Prisma interactive-transaction client. Typed loosely so that no ORM's types are needed.
 */
export type EmailOutboxTx = object;

/** Options of `EmailOutbox.send` (per item in `sendMany`). */
export interface OutboxSendOptions {
  /** The app's open transaction: the email is enqueued in it and sent only if it commits. Without it the outbox writes in its own. */
  tx?: EmailOutboxTx;
  /** Job id: the same id enqueued twice (in one transaction or two) is one job and one email. @default a random id */
  jobId?: string;
  /** Wait this long after the commit before the first attempt. */
  delayMs?: number;
}

/** An enqueued send. */
export interface OutboxedEmail {
  jobId: string;
  idempotencyKey: string;
}

/** What an outbox job holds in PostgreSQL (pg-boss's `data` column). */
export interface OutboxJobData extends EmailJobData {
  /** The app's job id (pg-boss's own id is a UUID derived from it). */
  jobId: string;
}

/** State of an enqueued send, as `EmailOutbox.status` reports it (the queue's `EmailJobStatus` shape). */
export interface EmailOutboxJobStatus {
  jobId: string;
  idempotencyKey: string;
  state: 'waiting' | 'delayed' | 'active' | 'sent' | 'failed';
  /** Attempts finished. */
  attempts: number;
  messageId?: number;
  /** The message record once sent (dates as `Date`, as `EmailService` returns it). */
  record?: EmailLog;
  error?: { name: string; message: string; outcome?: string };
}

/** Events of the outbox's worker in this process, for logs and metrics (the queue's events). */
export interface EmailOutboxEvents {
  sent: (job: { jobId: string; idempotencyKey: string; record: EmailLog }) => void;
  failed: (job: { jobId: string; idempotencyKey: string; error: Error; final: boolean }) => void;
  rateLimited: (info: { jobId: string; retryAfterMs: number }) => void;
}

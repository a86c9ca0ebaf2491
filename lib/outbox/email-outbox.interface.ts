import type { EmailJobEvents, EmailJobReceipt, EmailJobStatus } from '../interfaces/email-job.interface.js';

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
  /** Job id: the same id enqueued twice (in one transaction or two) is one job and one email (for `keepSentForMs`). @default a random id */
  jobId?: string;
  /** Wait this long after the commit before the first attempt. */
  delayMs?: number;
  /** The account the job sends for (the `accounts` resolver finds its key at each attempt; only its id is stored). */
  account?: string;
}

/** An enqueued send. */
export type OutboxedEmail = EmailJobReceipt;

/** State of an enqueued send, as `EmailOutbox.status` reports it (the queue's shape). */
export type EmailOutboxJobStatus = EmailJobStatus;

/** Events of the outbox's worker in this process, for logs and metrics (the queue's events). */
export type EmailOutboxEvents = EmailJobEvents;

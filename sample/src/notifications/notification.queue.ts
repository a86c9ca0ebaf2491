import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { idempotencyKeyForJob, type NotificationJob } from './notification-job.js';

/**
 * An in-memory job queue, standing in for BullMQ, a database table or a message broker. What matters
 * for email is only that a job has a stable id that survives its retries.
 */
@Injectable()
export class NotificationQueue {
  private readonly jobs = new Map<string, NotificationJob>();

  /** Queues a welcome notification and returns the new job. */
  add(to: string, name: string): NotificationJob {
    const id = randomUUID();
    const now = new Date();
    const job: NotificationJob = {
      id,
      to,
      name,
      status: 'queued',
      idempotencyKey: idempotencyKeyForJob(id),
      attempts: 0,
      createdAt: now,
      nextAttemptAt: now,
      messageId: null,
      confirmedBy: null,
      lastError: null,
    };
    this.jobs.set(id, job);
    return job;
  }

  get(id: string): NotificationJob | undefined {
    return this.jobs.get(id);
  }

  /** Every job, oldest first. */
  all(): NotificationJob[] {
    return [...this.jobs.values()];
  }

  /** Jobs whose next attempt is due at `now`, oldest first. */
  due(now = new Date()): NotificationJob[] {
    return this.all().filter((job) => job.nextAttemptAt !== null && job.nextAttemptAt <= now);
  }
}

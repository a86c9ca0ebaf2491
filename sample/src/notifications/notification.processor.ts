import { Inject, Injectable, Logger } from '@nestjs/common';
import type { ConfigType } from '@nestjs/config';
import {
  EmailError,
  EmailSendUncertainError,
  EmailService,
  type EmailInput,
  type EmailLog,
} from 'nestjs-transactional-email';
import { sampleConfig } from '../sample.config.js';
import type { NotificationJob } from './notification-job.js';

/** True when a failed attempt may have created the message anyway. */
const mayExist = (err: unknown): boolean =>
  err instanceof EmailSendUncertainError || (err instanceof EmailError && err.outcome === 'uncertain');

/**
 * Works one notification job through one attempt. The rules that keep a job from ever sending twice:
 * 1. the Idempotency-Key comes from the job id, so every attempt of a job carries the same key;
 * 2. after an attempt whose outcome is unknown (`EmailSendUncertainError`) the job is `uncertain`: the next
 *    attempt first looks the message up with `findSent`, and only sends (with the same key) if it is not found;
 * 3. a new key is never made, whatever the error.
 */
@Injectable()
export class NotificationProcessor {
  private readonly logger = new Logger(NotificationProcessor.name);

  constructor(
    private readonly email: EmailService,
    @Inject(sampleConfig.KEY) private readonly settings: ConfigType<typeof sampleConfig>,
  ) {}

  /** The email a job sends. Inline content, so that `findSent` can match it by subject too. */
  messageFor(job: NotificationJob): EmailInput {
    return {
      from: this.settings.from,
      to: [job.to],
      subject: `Welcome, ${job.name}`,
      text: `Hello ${job.name}, your account is ready.`,
      html: `<p>Hello ${escapeHtml(job.name)}, your account is ready.</p>`,
    };
  }

  /** One attempt of `job`; updates the job in place and never throws. */
  async process(job: NotificationJob): Promise<void> {
    job.attempts++;
    const input = this.messageFor(job);
    try {
      if (job.status === 'uncertain') {
        // An earlier attempt may have created the message: look before sending. (Resending with the same key
        // would also be safe while the service remembers the key; the look-up covers the time after that.)
        const found = await this.email.findSent(input, { since: job.createdAt });
        if (found) return this.succeed(job, found, 'lookup');
      }
      const log = await this.email.send(input, { idempotencyKey: job.idempotencyKey });
      this.succeed(job, log, 'send');
    } catch (err) {
      this.fail(job, err);
    }
  }

  private succeed(job: NotificationJob, log: EmailLog, by: 'send' | 'lookup'): void {
    Object.assign(job, { status: 'sent', messageId: log.id, confirmedBy: by, nextAttemptAt: null });
    this.logger.log(`job ${job.id}: message ${log.id} (${log.status}), confirmed by ${by}`);
  }

  private fail(job: NotificationJob, err: unknown): void {
    const error = err instanceof Error ? err : new Error(String(err));
    const outcome = err instanceof EmailError ? err.outcome : undefined;
    job.lastError = { name: error.name, message: error.message, ...(outcome ? { outcome } : {}) };
    // Once an attempt may have created the message, the job stays uncertain until it is found or sent.
    const uncertain = job.status === 'uncertain' || mayExist(err);
    const retryable = uncertain || (err instanceof EmailError && err.retryable);
    if (!retryable || job.attempts >= this.settings.maxAttempts) {
      Object.assign(job, { status: 'failed', nextAttemptAt: null });
      const hint = uncertain
        ? ` The message may exist: look for key ${job.idempotencyKey} before resending.`
        : '';
      this.logger.error(`job ${job.id} failed after ${job.attempts} attempt(s): ${error.message}${hint}`);
      return;
    }
    job.status = uncertain ? 'uncertain' : 'retrying';
    job.nextAttemptAt = new Date(Date.now() + this.settings.retryDelayMs);
    this.logger.warn(`job ${job.id} is ${job.status} (${error.name}); next attempt with the same key`);
  }
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

import { EmailError } from './email.error.js';

/**
 * `waitFor` on a job that was cancelled: no attempt of it reached the service, so no email exists.
 * @publicApi
 */
export class EmailJobCancelledError extends EmailError {
  /** The cancelled job's id. */
  readonly jobId: string;

  constructor(jobId: string) {
    super(`Email job ${jobId} was cancelled before any attempt: no email was sent.`, {
      retryable: false,
      outcome: 'not-sent',
    });
    this.jobId = jobId;
  }
}

/**
 * A job id was queued again with an input other than the one its job holds. The job keeps its first
 * input (one job id is one email); this call's input was **not** queued. Use a new job id for a new email.
 * @publicApi
 */
export class EmailJobConflictError extends EmailError {
  /** The job ids whose stored input differs from this call's. */
  readonly jobIds: readonly string[];
  /** The first of `jobIds`. */
  readonly jobId: string;

  constructor(init: { jobIds: readonly string[]; queued: number }) {
    const ids = init.jobIds.join(', ');
    super(
      `Email job ${ids} already exists with a different input: this input was not queued ` +
        `(a job id is one email; use a new job id for a new email).` +
        (init.queued > 0 ? ` The call's ${init.queued} other job(s) were queued.` : ''),
      { retryable: false, outcome: 'not-sent' },
    );
    this.jobIds = [...init.jobIds];
    this.jobId = init.jobIds[0] ?? '';
  }
}

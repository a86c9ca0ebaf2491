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

import { EmailError } from './email.error.js';

/**
 * Redis did not take a queued email in time (down, unreachable, or too slow): nothing is known to be
 * queued. `jobIds` names the job ids that were fixed before the add; queueing again **with the same
 * job ids** can never make a second email, whatever happened. `mayLand` says whether the add may still
 * have reached Redis (`outcome: 'uncertain'`: the job may exist and will then be sent) or cannot have
 * (`outcome: 'not-sent'`: the command was never written to Redis). Not a failure of the email service.
 * @example
 * catch (e) { if (e instanceof EmailQueueUnavailableError) await retryLater(e.jobId); }
 * @publicApi
 */
export class EmailQueueUnavailableError extends EmailError {
  /** The first (for `send`, the only) job id. */
  readonly jobId: string;
  /** Every job id of the call, in order. */
  readonly jobIds: readonly string[];
  /** True when the add may have reached Redis: the job may exist and be sent. */
  readonly mayLand: boolean;

  constructor(init: { jobIds: readonly string[]; mayLand: boolean; reason: string; cause?: unknown }) {
    const ids = init.jobIds.length === 1 ? `job ${init.jobIds[0]}` : `jobs ${init.jobIds.join(', ')}`;
    super(
      init.jobIds.length === 0
        ? // a read or a change of a job that exists: nothing was queued by this call
          `The email queue cannot reach Redis: ${init.reason}`
        : `Redis did not take email ${ids} (${init.reason}). ` +
            (init.mayLand
              ? 'The add may still have reached Redis, so the email may be sent: '
              : 'Nothing was queued: ') +
            'queue it again later with the same job id (never a new one), which can never make a second email.',
      {
        retryable: true,
        outcome: init.mayLand && init.jobIds.length > 0 ? 'uncertain' : 'not-sent',
        cause: init.cause,
      },
    );
    this.jobId = init.jobIds[0] ?? '';
    this.jobIds = [...init.jobIds];
    this.mayLand = init.mayLand;
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

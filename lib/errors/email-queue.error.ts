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

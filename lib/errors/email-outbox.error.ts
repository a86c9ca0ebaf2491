import { EmailError } from './email.error.js';

/**
 * `EmailOutbox.send`'s `tx` is not a transaction the outbox can write through: an unknown kind (the
 * message names the kinds accepted), or a known kind outside a transaction. Nothing was written.
 * @publicApi
 */
export class EmailOutboxTxError extends EmailError {
  constructor(message: string) {
    super(message, { retryable: false, outcome: 'not-sent' });
  }
}

/**
 * PostgreSQL could not be reached (at boot, or for a read): the message says where and why, never a password.
 * @publicApi
 */
export class EmailOutboxUnavailableError extends EmailError {
  /** The job ids of the write that failed (empty for a read). */
  readonly jobIds: readonly string[];
  /** True when the write may have been committed all the same: enqueue again with the same job ids. */
  readonly mayLand: boolean;

  constructor(reason: string, cause?: unknown, init: { jobIds?: readonly string[]; mayLand?: boolean } = {}) {
    const mayLand = init.mayLand === true && (init.jobIds?.length ?? 0) > 0;
    super(
      `The email outbox cannot reach PostgreSQL: ${reason}` +
        (mayLand
          ? `. The write of job(s) ${init.jobIds?.join(', ')} may have been committed: enqueue again with the same job id(s), which can never make a second email.`
          : ''),
      { retryable: true, outcome: mayLand ? 'uncertain' : 'not-sent', cause },
    );
    this.jobIds = [...(init.jobIds ?? [])];
    this.mayLand = mayLand;
  }
}

import { EmailError } from './email.error.js';

/**
 * A single send whose outcome is still unknown after every retry and look-up in the message log.
 * The message may exist. Sending again is safe only with the same `idempotencyKey` and the same input.
 * @publicApi
 */
export class EmailSendUncertainError extends EmailError {
  /** The key every attempt carried; reuse it to retry safely. */
  readonly idempotencyKey: string;
  /** How many requests were made. */
  readonly attempts: number;

  constructor(init: { idempotencyKey: string; attempts: number; cause: unknown }) {
    const reason = init.cause instanceof Error ? init.cause.message : String(init.cause);
    super(
      `The outcome of the send with idempotency key ${init.idempotencyKey} is still unknown after ` +
        `${init.attempts} attempt(s) (last failure: ${reason}). The message may exist: look it up later ` +
        `(EmailService.findSent), or retry only with the same idempotency key and the same input.`,
      { retryable: true, outcome: 'uncertain', cause: init.cause },
    );
    this.idempotencyKey = init.idempotencyKey;
    this.attempts = init.attempts;
  }
}

import { EmailError } from './email.error.js';

/**
 * A single send whose outcome is still unknown after every retry and look-up in the message log.
 * The message may exist. Sending again is safe only with the same `idempotencyKey` and the same input.
 */
export class EmailSendUncertainError extends EmailError {
  /** The key every attempt carried; reuse it to retry safely. */
  readonly idempotencyKey: string;
  /** How many requests were made. */
  readonly attempts: number;

  constructor(init: { idempotencyKey: string; attempts: number; cause: unknown }) {
    const reason = init.cause instanceof Error ? init.cause.message : String(init.cause);
    super(
      `The send with idempotency key ${init.idempotencyKey} is still uncertain after ${init.attempts} attempt(s) ` +
        `and was not found in the message log (last failure: ${reason}). ` +
        `Look it up later, or retry only with the same idempotency key and input.`,
      { retryable: true, outcome: 'uncertain', cause: init.cause },
    );
    this.idempotencyKey = init.idempotencyKey;
    this.attempts = init.attempts;
  }
}

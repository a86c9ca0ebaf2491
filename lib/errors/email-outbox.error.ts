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
  constructor(reason: string, cause?: unknown) {
    super(`The email outbox cannot reach PostgreSQL: ${reason}`, {
      retryable: true,
      outcome: 'not-sent',
      cause,
    });
  }
}

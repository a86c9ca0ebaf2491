import { EmailError } from './email.error.js';

/**
 * Why an account could not be used.
 * @publicApi
 */
export type EmailAccountProblem =
  /** The call named no account and the module has no `apiKey` of its own. */
  | 'no-account'
  /** The account id breaks its rule (1 to 256 characters, no control characters). */
  | 'invalid-id'
  /** The resolver answered null: it does not know the account. */
  | 'unknown'
  /** The resolver threw, or did not answer within the call's deadline. */
  | 'resolver-failed'
  /** The resolver's answer breaks the rules of an account (a key that is not one, a bad base URL...). */
  | 'invalid-account';

/**
 * A call for an account the module cannot send for. Nothing was sent or queued (`outcome: 'not-sent'`).
 * Names the account id, never a key.
 * @publicApi
 */
export class EmailAccountError extends EmailError {
  /** The account id as the call gave it (cut to 256 characters). */
  readonly accountId: string | undefined;
  readonly problem: EmailAccountProblem;

  constructor(init: {
    accountId: string | undefined;
    problem: EmailAccountProblem;
    detail?: string;
    cause?: unknown;
  }) {
    const who = init.accountId === undefined ? 'no account' : `account ${JSON.stringify(init.accountId)}`;
    super(`Cannot send for ${who}: ${init.detail ?? EXPLAINED[init.problem]}`, {
      retryable: init.problem === 'resolver-failed',
      outcome: 'not-sent',
      cause: init.cause,
    });
    this.accountId = init.accountId;
    this.problem = init.problem;
  }
}

const EXPLAINED: Record<EmailAccountProblem, string> = {
  'no-account':
    'the call names no account ({ account }) and the module has no apiKey of its own. Nothing was sent.',
  'invalid-id': 'an account id is 1 to 256 characters, without control characters. Nothing was sent.',
  unknown: 'the account resolver does not know it (it answered null). Nothing was sent.',
  'resolver-failed': 'the account resolver failed or did not answer in time. Nothing was sent.',
  'invalid-account': "the account resolver's answer is not a usable account. Nothing was sent.",
};

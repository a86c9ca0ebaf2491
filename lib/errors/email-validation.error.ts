import { EmailError } from './email.error.js';

/**
 * One problem found in an input, with the path to the offending value.
 * @publicApi
 */
export interface EmailValidationIssue {
  /** Where the problem is: `to[7]`, `attachments[0].content`, `[3].to[7]` for batch items, `''` for the whole input. */
  path: string;
  /** What is wrong, in plain words. */
  message: string;
}

function describe(issues: readonly EmailValidationIssue[]): string {
  const lines = issues.map((i) =>
    i.path && !i.message.startsWith(i.path) ? `${i.path}: ${i.message}` : i.message,
  );
  return `Invalid email input (${issues.length} problem${issues.length === 1 ? '' : 's'}): ${lines.join('; ')}`;
}

/**
 * Thrown before any request is made when an input breaks a rule of the service's contract.
 * Lists every problem found, not just the first.
 * @publicApi
 */
export class EmailValidationError extends EmailError {
  readonly issues: readonly EmailValidationIssue[];

  constructor(issues: readonly EmailValidationIssue[]) {
    super(describe(issues), { retryable: false, outcome: 'not-sent' });
    this.issues = issues;
  }
}

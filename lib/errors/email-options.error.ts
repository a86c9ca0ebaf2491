import { EmailError } from './email.error.js';

/**
 * The module's options are wrong; thrown at boot, naming every bad option at once.
 * @publicApi
 */
export class EmailOptionsError extends EmailError {
  /** One sentence per bad option. */
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super(`Invalid EmailModule options (${problems.length}): ${problems.join('; ')}`);
    this.problems = problems;
  }
}

import { EmailOptionsError } from './email-options.error.js';

/**
 * Environment variables for `emailConfig` are missing or wrong. Names every bad variable at once;
 * never shows the API key.
 *
 * @example
 * catch (e) { if (e instanceof EmailEnvError) console.error(`fix ${e.variables.join(', ')}`); }
 */
export class EmailEnvError extends EmailOptionsError {
  /** The bad variables, e.g. `['EMAIL_TIMEOUT_MS', 'EMAIL_RECONCILE']`. */
  readonly variables: readonly string[];

  constructor(problems: readonly string[], variables: readonly string[]) {
    super(problems);
    this.message =
      `Invalid email settings in ${variables.length} environment variable(s) ` +
      `(${variables.join(', ')}): ${problems.join('; ')}`;
    this.variables = variables;
  }
}

import type { EmailModuleOptions } from '../interfaces/email-module-options.interface.js';
import type { EmailSandbox } from '../testing/email-sandbox.js';
import type { SandboxMailboxOptions, SandboxOptions } from '../testing/sandbox.options.js';

/**
 * Options of `EmailTestingModule.forRoot`. Every field is optional.
 *
 * @example
 * EmailTestingModule.forRoot({ mailbox: { domains: ['shop.test'] }, email: { maxRetries: 0 } })
 * @publicApi
 */
export interface EmailTestingModuleOptions {
  /**
   * A running sandbox to make the mailbox on (e.g. one per test run). Without it the module starts a
   * sandbox of its own and closes it with the app.
   */
  sandbox?: EmailSandbox;
  /** Options of the sandbox the module starts (ignored with `sandbox`). @default {} */
  sandboxOptions?: SandboxOptions;
  /** Options of the fresh mailbox (domains, plan, quota, clock, ...). @default {} */
  mailbox?: SandboxMailboxOptions;
  /**
   * `EmailModule` options beside the mailbox's `apiKey` and `baseUrl`.
   * @default { logger: false }
   */
  email?: Partial<Omit<EmailModuleOptions, 'apiKey' | 'baseUrl'>>;
  /** Register `EmailService`, `SandboxMailbox` and `EmailSandbox` for every module of the app. @default true */
  isGlobal?: boolean;
}

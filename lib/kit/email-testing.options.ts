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
  email?: Partial<Omit<EmailModuleOptions, 'apiKey' | 'baseUrl' | 'accounts'>>;
  /**
   * Accounts of the app (see "Many accounts" in docs/testing-your-app.md), each with a sandbox mailbox
   * of its own: a list of account ids (mailboxes with the sandbox's defaults), or a record of account id
   * to its mailbox's options. `SandboxAccounts` (injectable) holds them and is the `EmailModule`'s
   * `accounts` resolver; the module then has no `apiKey` of its own (see `defaultAccount`). @default none
   */
  accounts?: readonly string[] | Readonly<Record<string, SandboxMailboxOptions>>;
  /**
   * With `accounts`: also give `EmailModule` the `SandboxMailbox`'s key as its own `apiKey`, the default
   * account a call without `{ account }` sends for. Without it such a call is refused
   * (`EmailAccountError`, problem `'no-account'`). @default false
   */
  defaultAccount?: boolean;
  /**
   * Register `EmailService`, `SandboxMailbox`, `SandboxAccounts` and `EmailSandbox` for every module of
   * the app. @default true
   */
  isGlobal?: boolean;
}

/** The `accounts` option as account ids and their mailbox options; throws on an empty or repeated id. */
export function accountMailboxOptions(
  accounts: EmailTestingModuleOptions['accounts'],
): Array<[string, SandboxMailboxOptions]> {
  if (accounts === undefined) return [];
  const entries: Array<[string, SandboxMailboxOptions]> = Array.isArray(accounts)
    ? (accounts as readonly string[]).map((id) => [id, {}])
    : Object.entries(accounts as Record<string, SandboxMailboxOptions>).map(([id, o]) => [id, { ...o }]);
  const seen = new Set<string>();
  for (const [id] of entries) {
    if (typeof id !== 'string' || id === '')
      throw new TypeError('EmailTestingModule: every account id is a non-empty string');
    if (seen.has(id))
      throw new TypeError(`EmailTestingModule: the account ${JSON.stringify(id)} is given twice`);
    seen.add(id);
  }
  return entries;
}

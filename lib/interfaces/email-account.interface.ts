import type { EmailRateBudget } from './rate-limit-options.interface.js';

/**
 * One account the module sends for: what `EmailAccountResolver.resolve` answers. Checked like the
 * module's own options before it is used; the key is never logged, stored or shown.
 * @publicApi
 */
export interface EmailAccount {
  /** The account's private API key, sent as `Authorization: Bearer`. */
  apiKey: string;
  /** The service's base URL for this account. @default the module's `baseUrl` */
  baseUrl?: string;
  /** Sender used when an input of this account has no `from`. @default the module's `defaultFrom` */
  defaultFrom?: string;
  /**
   * What the service allows this account, counted in every process through the module's
   * `rateLimit.redis` (in-process without it). The module's own `rateLimit` budgets still apply on top,
   * as one budget over every account. @default none of its own
   */
  rateLimit?: { recipients?: EmailRateBudget; requests?: EmailRateBudget };
}

/**
 * Finds an account's key (and its own base URL, sender and limits) at run time: from the app's database,
 * a secret store, a config file. Answers null for an account it does not know. Answers are cached for the
 * module's `accountCacheTtlMs`; `EmailService.forgetAccount(id)` drops one at once.
 *
 * @example
 * @Injectable()
 * export class TenantAccounts implements EmailAccountResolver {
 *   constructor(private readonly tenants: TenantRepository) {}
 *   async resolve(accountId: string): Promise<EmailAccount | null> {
 *     const t = await this.tenants.findOneBy({ id: accountId });
 *     return t ? { apiKey: t.emailApiKey, defaultFrom: t.sender } : null;
 *   }
 * }
 * @publicApi
 */
export interface EmailAccountResolver {
  resolve(accountId: string): Promise<EmailAccount | null> | EmailAccount | null;
}

/**
 * The `accounts` option: a resolver object, a class the module instantiates with Nest's injector (found
 * among the app's providers, or created with its dependencies), or a plain function.
 * @publicApi
 */
export type EmailAccountsOption =
  | EmailAccountResolver
  | (new (...args: never[]) => EmailAccountResolver)
  | ((accountId: string) => Promise<EmailAccount | null> | EmailAccount | null);

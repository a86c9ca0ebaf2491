import { createHmac } from 'node:crypto';
import type { Dispatcher } from 'undici';
import type { ResolvedAccount } from '../config/email-account.options.js';
import { EmailApiClient } from '../http/email-api.client.js';
import { EmailTransport } from '../http/email-transport.client.js';
import { secretRedactor } from '../http/secret-redaction.helpers.js';
import type { ResolvedEmailOptions } from '../interfaces/email-module-options.interface.js';
import type { DeliveryObserver } from '../telemetry/delivery.telemetry.js';
import type { Clock } from '../time/clock.helpers.js';
import {
  CLAIMED_RECORDS_CAP,
  CLAIMED_RECORDS_FIRST_PLACES,
  ClaimedRecords,
} from './claimed-records.store.js';
import { IdenticalSends } from './identical-sends.store.js';
import { SendRateLimiter } from './rate-limit.store.js';
import { RequestEngine } from './request.engine.js';

/**
 * Everything one account sends with: its options (the module's, with the account's base URL and sender),
 * its request loop (its key, its records held and identical sends, its limits) and a tag of its key.
 */
export class AccountDesk {
  readonly #apiKey: string;

  constructor(
    /** Undefined for the module's own account (its `apiKey`). */
    readonly accountId: string | undefined,
    readonly options: ResolvedEmailOptions,
    readonly engine: RequestEngine,
    /** The account's limiter (an account's pause and budgets, then the module's), or null without one. */
    readonly rate: SendRateLimiter | null,
    apiKey: string,
    /** The most recipients one request may carry under the account's and the module's budgets. */
    readonly recipientsLimit?: number,
  ) {
    this.#apiKey = apiKey;
  }

  /**
   * A short tag that tells two keys apart without telling anything of either: an HMAC of `salt` (a job
   * id) under the key, 16 characters. A job's record keeps the tag of the key its last attempt used, so a
   * later attempt knows when the account's key was rotated in between (and then does not count on the
   * service replaying the earlier attempt's Idempotency-Key under the new key).
   */
  keyTag(salt: string): string {
    return createHmac('sha256', this.#apiKey)
      .update(`email-job-key-tag\0${salt}`)
      .digest('base64url')
      .slice(0, 16);
  }

  toJSON(): Record<string, unknown> {
    return { accountId: this.accountId, baseUrl: this.options.baseUrl.href };
  }
}

/**
 * What an account keeps across its key's rotations, and never its key: the records its sends were
 * handed, its open identical sends, its limiter (made with its first desk: its budgets come with the
 * resolver's answer).
 */
export class AccountState {
  readonly claimed: ClaimedRecords;
  readonly identical = new IdenticalSends();
  rate: SendRateLimiter | null | undefined = undefined;
  /** The budgets `rate` was made for, as JSON: another answer's budgets make a new limiter. */
  budgetsSeen: string | undefined = undefined;

  /** `places`: how many claims it makes room for at once (the module's own: all of them). */
  constructor(places = CLAIMED_RECORDS_FIRST_PLACES) {
    this.claimed = new ClaimedRecords(CLAIMED_RECORDS_CAP, places);
  }

  /**
   * Whether nothing of it has been under way since `opened` sends had been opened (`identical.opened` read
   * earlier), and nothing is at `now`: no send open since, no window or pause counted here running.
   */
  quietSince(opened: number, now: number): boolean {
    return (
      this.identical.opened === opened &&
      this.identical.idle &&
      (this.rate === null || this.rate === undefined || this.rate.quietAt(now))
    );
  }
}

/** What desks are built from: the module's parts. */
export interface DeskParts {
  /** The module's checked options: its base URL's pool serves every account on that URL. */
  readonly module: ResolvedEmailOptions;
  readonly observer: DeliveryObserver;
  readonly clock: Clock;
  /** The module's limiter (its `rateLimit`: the budget over every account, and the shared Redis), or null. */
  readonly moduleRate: SendRateLimiter | null;
  /** The prefix of the accounts' limiter keys (the module's `rateLimit.prefix`, hash tag included). */
  readonly ratePrefix: string;
}

/**
 * Builds every desk of one module instance, the module's own (its `apiKey`) and each account's, the one
 * way: a transport with the account's key on the pool of its base URL (one pool per origin, the module's
 * included, closed with the module), an API client that redacts that key, a request loop on the account's
 * state, and the account's limiter. With `accounts`, the module's own key is one account among the others:
 * its limiter has a pause of its own (a 429 for it pauses it alone), then the module's budgets.
 */
export class DeskBuilder {
  /** One pool per origin (the module's, and those of accounts on other base URLs). */
  private readonly pools = new Map<string, EmailTransport>();

  constructor(private readonly parts: DeskParts) {}

  /** The desk of `account` (`accountId` undefined: the module's own) on `state`, whose limiter it may make. */
  build(accountId: string | undefined, account: ResolvedAccount, state: AccountState): AccountDesk {
    const { observer, clock, module } = this.parts;
    const rate = this.limiterOf(accountId, account, state);
    const { options, apiKey } = account;
    const transport = new EmailTransport(
      { ...options, dispatcher: options.dispatcher ?? this.dispatcherFor(options) },
      apiKey,
    );
    const api = new EmailApiClient(transport, secretRedactor(apiKey));
    const engine = new RequestEngine(api, observer, state.claimed, state.identical, rate, clock);
    const limits = [account.budgets?.recipients?.limit, module.rateLimit?.recipients?.limit];
    const known = limits.filter((n): n is number => n !== undefined);
    const recipientsLimit = known.length === 0 ? undefined : Math.min(...known);
    return new AccountDesk(accountId, options, engine, rate, apiKey, recipientsLimit);
  }

  /** Closes the pools this instance opened (a dispatcher given in the options is left open). */
  async close(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((t) => t.close()));
  }

  /**
   * The account's limiter, kept on its state while its budgets stay the same (counted under the same keys
   * as before). The module's own: the module's limiter itself without `accounts`; with them, a pause of its
   * own before the module's budgets.
   */
  private limiterOf(
    accountId: string | undefined,
    account: ResolvedAccount,
    state: AccountState,
  ): SendRateLimiter | null {
    const { moduleRate, ratePrefix, clock, module } = this.parts;
    const budgetsSeen = JSON.stringify(account.budgets ?? null);
    if (state.rate !== undefined && state.budgetsSeen === budgetsSeen) return state.rate;
    state.budgetsSeen = budgetsSeen;
    if (accountId === undefined && module.accounts === undefined) return (state.rate = moduleRate);
    const prefix = accountId === undefined ? `${ratePrefix}:own` : `${ratePrefix}:account:${accountId}`;
    const owner = accountId === undefined ? 'module' : 'account';
    state.rate = new SendRateLimiter({ ...account.budgets, prefix }, moduleRate?.sharedRedis, clock, {
      parent: moduleRate,
      owner,
    });
    return state.rate;
  }

  /** The pool of an account's base URL: one per origin, made on first use. */
  private dispatcherFor(options: ResolvedEmailOptions): Dispatcher {
    let pool = this.pools.get(options.origin);
    if (pool === undefined) {
      pool = new EmailTransport(options, '');
      this.pools.set(options.origin, pool);
    }
    return pool.dispatcher;
  }
}

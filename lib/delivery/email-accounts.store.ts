import { createHmac } from 'node:crypto';
import type { Dispatcher } from 'undici';
import { resolveAccount } from '../config/email-account.options.js';
import { ACCOUNT_ID_MAX_LENGTH, accountIdProblem } from '../validation/call-options.rules.js';
import { EmailAccountError } from '../errors/email-account.error.js';
import { EmailApiClient } from '../http/email-api.client.js';
import { EmailTransport } from '../http/email-transport.client.js';
import { secretRedactor } from '../http/secret-redaction.helpers.js';
import type { EmailAccount } from '../interfaces/email-account.interface.js';
import type { ResolvedEmailOptions } from '../interfaces/email-module-options.interface.js';
import type { DeliveryObserver } from '../telemetry/delivery.telemetry.js';
import { withTimeout, type Clock } from '../time/clock.helpers.js';
import { ClaimedRecords } from './claimed-records.store.js';
import { IdenticalSends } from './identical-sends.store.js';
import type { RateRedis } from './rate-limit-redis.helpers.js';
import { SendRateLimiter } from './rate-limit.store.js';
import { RequestEngine } from './request.engine.js';

/** The resolver as the store calls it: the `accounts` option, whatever its form, as one function. */
export type ResolveAccount = (accountId: string) => Promise<EmailAccount | null> | EmailAccount | null;

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

/** What an account keeps across its key's rotations: its records held, identical sends and limits. */
interface AccountState {
  readonly claimed: ClaimedRecords;
  readonly identical: IdenticalSends;
  /** Null until the first desk is made (its limits come with the resolver's answer). */
  rate: SendRateLimiter | null | undefined;
  budgetsSeen?: string;
}

/** A resolved account, kept until `expiresAt`. */
interface Cached {
  readonly desk: AccountDesk;
  readonly expiresAt: number;
}

/** What the store builds desks from: the module's parts. */
export interface AccountParts {
  readonly observer: DeliveryObserver;
  readonly clock: Clock;
  /** The module's limiter (its `rateLimit`: the budget over every account), or null. */
  readonly moduleRate: SendRateLimiter | null;
  /** The module's limiter's Redis, shared by the accounts' limits (null: counted in this process). */
  readonly rateRedis: RateRedis | null;
  /** The prefix of the accounts' limiter keys (the module's `rateLimit.prefix`, hash tag included). */
  readonly ratePrefix: string;
  /** The module's own transport: its connection pool serves every account on the module's base URL. */
  readonly transport: EmailTransport;
  readonly allowInsecureHttp: boolean;
}

/**
 * The accounts of one module instance (`accounts` option): resolves an account id to its desk, keeps the
 * answer for `accountCacheTtlMs` (one resolver call at a time per account), and drops one on
 * `forget`. Accounts on the module's base URL share its connection pool; another base URL gets a pool of
 * its own, closed with the module. The module's own `apiKey`, when given, is the desk of calls without
 * `{ account }`.
 */
export class EmailAccounts {
  private readonly cache = new Map<string, Cached>();
  private readonly pending = new Map<string, Promise<AccountDesk>>();
  private readonly states = new Map<string, AccountState>();
  /** Transports of base URLs other than the module's, by origin: their pools serve every account there. */
  private readonly pools = new Map<string, EmailTransport>();

  constructor(
    private readonly resolved: ResolvedEmailOptions,
    private readonly resolver: ResolveAccount | null,
    /** The desk of the module's own `apiKey`, or null without one. */
    readonly own: AccountDesk | null,
    private readonly parts: AccountParts,
  ) {}

  /**
   * The desk of `accountId` (the module's own without one): at once when it is cached, else once the
   * resolver answered, within `timeoutMs`. Throws `EmailAccountError` (nothing was sent) for an account
   * that cannot be used, naming it, never its key.
   */
  desk(accountId: unknown, timeoutMs: number): AccountDesk | Promise<AccountDesk> {
    if (accountId === undefined) {
      if (this.own !== null) return this.own;
      throw new EmailAccountError({ accountId: undefined, problem: 'no-account' });
    }
    const problem = accountIdProblem(accountId);
    if (problem !== undefined)
      throw new EmailAccountError({
        accountId: shown(accountId),
        problem: 'invalid-id',
        detail: `${problem}. Nothing was sent.`,
      });
    const id = accountId as string;
    if (this.resolver === null)
      throw new EmailAccountError({
        accountId: id,
        problem: 'unknown',
        detail:
          'the module has no accounts option, so it can send for its own apiKey only. Nothing was sent.',
      });
    const cached = this.cache.get(id);
    if (cached !== undefined && cached.expiresAt > this.parts.clock.now()) return cached.desk;
    let resolving = this.pending.get(id);
    if (resolving === undefined) {
      resolving = this.resolve(id, timeoutMs).finally(() => this.pending.delete(id));
      this.pending.set(id, resolving);
    }
    // The caller's signal is not raced here: the resolution is bounded by the call's budget, and the call
    // itself ends at once on an aborted signal, before any request.
    return resolving;
  }

  /** Drops a resolved account at once (its key was rotated or revoked): the next call resolves it again. */
  forget(accountId: string): void {
    this.cache.delete(accountId);
  }

  /** Closes the pools opened for other base URLs, and the accounts' limiters' state. */
  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((t) => t.close()));
    this.pools.clear();
    this.cache.clear();
  }

  private async resolve(id: string, timeoutMs: number): Promise<AccountDesk> {
    let answer: EmailAccount | null;
    try {
      answer = await withTimeout(
        Promise.resolve().then(() => this.resolver!(id)),
        timeoutMs,
        'the account resolver',
      );
    } catch (cause) {
      throw new EmailAccountError({ accountId: id, problem: 'resolver-failed', cause: secretFree(cause) });
    }
    if (answer === null || answer === undefined)
      throw new EmailAccountError({ accountId: id, problem: 'unknown' });
    const account = resolveAccount(answer, this.resolved, this.parts.allowInsecureHttp);
    if (Array.isArray(account))
      throw new EmailAccountError({
        accountId: id,
        problem: 'invalid-account',
        detail: `the account resolver's answer is not a usable account: ${account.join('; ')}. Nothing was sent.`,
      });
    const state = this.stateOf(id);
    const budgetsSeen = JSON.stringify(account.budgets ?? null);
    if (state.rate === undefined || state.budgetsSeen !== budgetsSeen) {
      // The account's limits as the resolver gives them now: counted under the same keys as before.
      state.rate = new SendRateLimiter(
        { ...account.budgets, prefix: `${this.parts.ratePrefix}:account:${id}` },
        this.parts.rateRedis ?? undefined,
        this.parts.clock,
        { parent: this.parts.moduleRate },
      );
      state.budgetsSeen = budgetsSeen;
    }
    const transport = new EmailTransport(
      { ...account.options, dispatcher: account.options.dispatcher ?? this.dispatcherFor(account.options) },
      account.apiKey,
    );
    const api = new EmailApiClient(transport, secretRedactor(account.apiKey));
    const { observer, clock } = this.parts;
    const engine = new RequestEngine(api, observer, state.claimed, state.identical, state.rate, clock);
    const limits = [account.budgets?.recipients?.limit, this.resolved.rateLimit?.recipients?.limit];
    const known = limits.filter((n): n is number => n !== undefined);
    const recipientsLimit = known.length === 0 ? undefined : Math.min(...known);
    const desk = new AccountDesk(id, account.options, engine, state.rate, account.apiKey, recipientsLimit);
    this.cache.set(id, { desk, expiresAt: clock.now() + this.resolved.accountCacheTtlMs });
    return desk;
  }

  private stateOf(id: string): AccountState {
    let state = this.states.get(id);
    if (state === undefined) {
      state = { claimed: new ClaimedRecords(), identical: new IdenticalSends(), rate: undefined };
      this.states.set(id, state);
    }
    return state;
  }

  /** The connection pool for an account's base URL: the module's for its own origin, else one per origin. */
  private dispatcherFor(options: ResolvedEmailOptions): Dispatcher {
    if (options.origin === this.resolved.origin) return this.parts.transport.dispatcher;
    let pool = this.pools.get(options.origin);
    if (pool === undefined) {
      pool = new EmailTransport(options, '');
      this.pools.set(options.origin, pool);
    }
    return pool.dispatcher;
  }
}

/** An account id as an error may show it: a string, cut to its longest allowed length. */
function shown(id: unknown): string | undefined {
  return typeof id === 'string' ? id.slice(0, ACCOUNT_ID_MAX_LENGTH) : undefined;
}

/**
 * The resolver's failure as the error's cause: its name and message only, never the object itself (the
 * app's error may carry a connection string, or the account's key in a field).
 */
function secretFree(cause: unknown): Error {
  const err = new Error(cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause));
  err.name = 'AccountResolverFailure';
  return err;
}

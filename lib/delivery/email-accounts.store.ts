import type { ModuleRef } from '@nestjs/core';
import { accountResolverOf, resolveAccount, type ResolvedAccount } from '../config/email-account.options.js';
import { RATE_LIMIT_DEFAULT_PREFIX } from '../config/rate-limit.options.js';
import { apiKeyOf } from '../config/secret-safe.options.js';
import { EmailAccountError } from '../errors/email-account.error.js';
import type {
  EmailModuleOptions,
  ResolvedEmailOptions,
} from '../interfaces/email-module-options.interface.js';
import type { DeliveryObserver } from '../telemetry/delivery.telemetry.js';
import type { Clock } from '../time/clock.helpers.js';
import { ACCOUNT_ID_MAX_LENGTH, accountIdProblem } from '../validation/call-options.rules.js';
import { CLAIMED_RECORDS_CAP } from './claimed-records.store.js';
import { AccountDesk, AccountState, DeskBuilder } from './account-desk.store.js';
import { AccountResolutions, type DeskWait, type ResolveAccount } from './account-resolutions.store.js';
import { FIND_SENT_SKEW_MS } from './find-sent.policy.js';
import { openRateRedis, type RateRedis } from './rate-limit-redis.helpers.js';
import { SendRateLimiter } from './rate-limit.store.js';

/** The desk as the job layer names it (it imports it from here), and what a call waits with. */
export type { DeskRequest, DeskWait } from './account-resolutions.store.js';

/**
 * How long an account's state (never its key) stays after its desk went, once nothing of it is under way:
 * a look-up of a later send reads records created up to `FIND_SENT_SKEW_MS` before it began, so the records
 * the account's last sends were handed must still be known as theirs until then, with the service's clock
 * ahead of ours by as much again.
 */
export const ACCOUNT_STATE_LINGER_MS = 2 * FIND_SENT_SKEW_MS + 1_000;

/** The least time between two sweeps of expired accounts. */
const SWEEP_MIN_GAP_MS = 25;

/** What the accounts of one module instance are made with. */
export interface AccountsParts {
  /** The `accounts` option as one function, or null without it. */
  readonly resolver: ResolveAccount | null;
  readonly builder: DeskBuilder;
  readonly clock: Clock;
  /** The module's own key (undefined without one: calls must name an account). */
  readonly ownKey: string | undefined;
  /** The module's limiter, closed with the accounts (its Redis connection), or null. */
  readonly moduleRate: SendRateLimiter | null;
  /** Whether an account's base URL may be plain http to a host that is not loopback. */
  readonly allowInsecureHttp: boolean;
}

/** A resolved account: its desk (with its key) until `expiresAt`. */
interface Entry {
  readonly desk: AccountDesk;
  readonly state: AccountState;
  readonly expiresAt: number;
  /** The resolution that made it: an older one finishing later does not replace it. */
  readonly seq: number;
}

/** An account whose desk went (expired, forgotten): its state, kept until nothing of it is under way. */
interface Resting {
  readonly state: AccountState;
  /** When it came to rest, or was last seen busy. */
  readonly since: number;
  /** How many sends its state had opened then (`IdenticalSends.opened`): one opened since is activity. */
  readonly opened: number;
}

/**
 * The accounts of one module instance (`accounts` option): resolves an account id to its desk and keeps it
 * for `accountCacheTtlMs`, at most `accountCacheMax` accounts (the longest resolved go first). Calls for an
 * account share one resolver call, each waiting within its own deadline and signal. When a desk expires or
 * is forgotten, its key goes with it; the account's state (records held, open sends, the limiter's counts)
 * stays until nothing of it is under way, then goes too: nothing is kept of an account the app stopped
 * using. A resolution that began before `forget` is never cached, and its waiters ask again. The module's
 * own `apiKey`, when given, is the desk of calls without `{ account }`, kept for the module's life.
 */
export class EmailAccounts {
  /** Resolved accounts, in the order they were resolved (the order they expire in). */
  private readonly entries = new Map<string, Entry>();
  /** Accounts without a desk whose state is still kept, in the order they came to rest. */
  private readonly resting = new Map<string, Resting>();
  private sweeper: NodeJS.Timeout | undefined;
  private sweepAt = Infinity;
  /** The desk of the module's own `apiKey`, or null without one. */
  readonly own: AccountDesk | null;

  /** Null without the `accounts` option. */
  private readonly resolutions: AccountResolutions | null;
  private readonly builder: DeskBuilder;
  private readonly clock: Clock;
  private readonly moduleRate: SendRateLimiter | null;

  /** `parts.ownKey` is handed to the own desk's transport and kept nowhere else. */
  constructor(
    private readonly resolved: ResolvedEmailOptions,
    parts: AccountsParts,
  ) {
    const { ownKey, allowInsecureHttp } = parts;
    this.resolutions =
      parts.resolver === null
        ? null
        : new AccountResolutions({
            resolver: parts.resolver,
            check: (answer) => resolveAccount(answer, resolved, allowInsecureHttp),
            settle: (id, account, seq) => this.settle(id, account, seq),
            clock: parts.clock,
          });
    this.builder = parts.builder;
    this.clock = parts.clock;
    this.moduleRate = parts.moduleRate;
    this.own =
      ownKey === undefined
        ? null
        : this.builder.build(
            undefined,
            { options: resolved, apiKey: ownKey },
            new AccountState(CLAIMED_RECORDS_CAP),
          );
  }

  /**
   * The accounts of a module instance from its options: the module's limiter (its Redis connects at `check`),
   * the resolver (`accounts`, a class built by Nest's injector when it is not one of the app's providers) and the
   * module's own desk.
   */
  static async open(
    options: EmailModuleOptions,
    resolved: ResolvedEmailOptions,
    observer: DeliveryObserver,
    clock: Clock,
    moduleRef: ModuleRef,
  ): Promise<EmailAccounts> {
    const { rateLimit } = resolved;
    let moduleRate: SendRateLimiter | null = null;
    if (rateLimit !== undefined) {
      const redis = rateLimit.redis === undefined ? undefined : openRateRedis(rateLimit.redis);
      moduleRate = new SendRateLimiter(rateLimit, redis, clock);
    }
    const ratePrefix = rateLimit?.prefix ?? RATE_LIMIT_DEFAULT_PREFIX;
    const builder = new DeskBuilder({ module: resolved, observer, clock, moduleRate, ratePrefix });
    const resolver = await accountResolverOf(resolved.accounts, moduleRef);
    return new EmailAccounts(resolved, {
      resolver,
      builder,
      clock,
      ownKey: resolved.hasApiKey ? (apiKeyOf(options) as string) : undefined,
      moduleRate,
      allowInsecureHttp: options.allowInsecureHttp === true,
    });
  }

  /**
   * The desk of `accountId` (the module's own without one): at once when it is cached, else once the
   * resolver answered, within the call's `timeoutMs` and until its `signal`. Throws `EmailAccountError`
   * (nothing was sent) for an account that cannot be used, naming it, never its key.
   */
  desk(accountId: unknown, wait: DeskWait): AccountDesk | Promise<AccountDesk> {
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
    if (this.resolutions === null)
      throw new EmailAccountError({
        accountId: id,
        problem: 'unknown',
        detail:
          'the module has no accounts option, so it can send for its own apiKey only. Nothing was sent.',
      });
    const now = this.clock.now();
    const entry = this.entries.get(id);
    if (entry !== undefined && entry.expiresAt > now) return entry.desk;
    return this.resolutions.waitFor(id, wait);
  }

  /**
   * Drops an account at once (its key was rotated or revoked): its desk and key go now, a resolution
   * running for it will not be cached (its callers ask again), and the next call resolves it anew.
   */
  forget(accountId: string): void {
    this.resolutions?.forget(accountId);
    const entry = this.entries.get(accountId);
    if (entry === undefined) return;
    this.entries.delete(accountId);
    this.rest(accountId, entry.state, this.clock.now());
  }

  /** The Redis the module's limiter counts in (`rateLimit.redis`), shared by every account; undefined without. */
  get sharedRedis(): RateRedis | undefined {
    return this.moduleRate?.sharedRedis;
  }

  /** How many accounts are held: with a desk (`resolved`), and only their state (`resting`). */
  get held(): { resolved: number; resting: number } {
    return { resolved: this.entries.size, resting: this.resting.size };
  }

  /**
   * The boot's check, when the module initialises: the module limiter's Redis (`rateLimit.redis`) connects and
   * answers, or the boot fails naming the option.
   */
  async check(): Promise<void> {
    await this.moduleRate?.sharedRedis?.check();
  }

  /** Closes the pools, the module limiter's Redis connection, and drops every account. */
  async close(): Promise<void> {
    clearTimeout(this.sweeper);
    this.sweeper = undefined;
    this.sweepAt = Infinity;
    this.entries.clear();
    this.resting.clear();
    this.resolutions?.close();
    await Promise.all([this.builder.close(), this.moduleRate?.close()]);
  }

  /**
   * The desk of a checked answer: built on the account's state (kept across its keys) and cached, unless a
   * later resolution already cached one (that one is answered).
   */
  private settle(id: string, account: ResolvedAccount, seq: number): AccountDesk {
    const current = this.entries.get(id);
    if (current !== undefined && current.seq > seq) return current.desk;
    const state = current?.state ?? this.resting.get(id)?.state ?? new AccountState();
    this.resting.delete(id);
    const desk = this.builder.build(id, account, state);
    const now = this.clock.now();
    this.entries.delete(id); // re-inserted last: the map stays in the order the desks expire
    this.entries.set(id, {
      desk,
      state,
      expiresAt: now + this.resolved.accountCacheTtlMs,
      seq,
    });
    this.keepWithinCap();
    this.sweepBy(now + this.resolved.accountCacheTtlMs);
    return desk;
  }

  /** Keeps the state of an account whose desk went, until nothing of it is under way. */
  private rest(id: string, state: AccountState, now: number): void {
    this.resting.delete(id);
    this.resting.set(id, { state, since: now, opened: state.identical.opened });
    this.sweepBy(now + ACCOUNT_STATE_LINGER_MS);
  }

  /** Past `accountCacheMax`, drops accounts: resting ones first, then the longest resolved. */
  private keepWithinCap(): void {
    const max = this.resolved.accountCacheMax;
    while (this.entries.size + this.resting.size > max) {
      const oldest = this.resting.keys().next();
      if (!oldest.done) {
        this.resting.delete(oldest.value);
        continue;
      }
      this.entries.delete(this.entries.keys().next().value!);
    }
  }

  /**
   * Drops expired desks (their state comes to rest) and resting states that stayed quiet for
   * `ACCOUNT_STATE_LINGER_MS` (one still busy is looked at again later), then plans the next sweep.
   */
  private sweep(): void {
    this.sweeper = undefined;
    this.sweepAt = Infinity;
    const now = this.clock.now();
    for (const [id, entry] of this.entries) {
      if (entry.expiresAt > now) break;
      this.entries.delete(id);
      this.rest(id, entry.state, now);
    }
    for (const [id, resting] of this.resting) {
      if (now - resting.since < ACCOUNT_STATE_LINGER_MS) break;
      this.resting.delete(id);
      // Quiet for the whole linger (no send opened since it came to rest, none open now): it goes.
      if (!resting.state.quietSince(resting.opened, now)) this.rest(id, resting.state, now);
    }
    const nextEntry = this.entries.values().next();
    if (!nextEntry.done) this.sweepBy(nextEntry.value.expiresAt);
    const nextResting = this.resting.values().next();
    if (!nextResting.done) this.sweepBy(nextResting.value.since + ACCOUNT_STATE_LINGER_MS);
  }

  /** Makes sure a sweep runs by `at` (epoch ms), on one timer that never holds the process open. */
  private sweepBy(at: number): void {
    if (at >= this.sweepAt) return;
    clearTimeout(this.sweeper);
    this.sweepAt = at;
    const delay = Math.max(SWEEP_MIN_GAP_MS, at - this.clock.now());
    this.sweeper = setTimeout(() => this.sweep(), delay);
    this.sweeper.unref();
  }
}

/** An account id as an error may show it: a string, cut to its longest allowed length. */
function shown(id: unknown): string | undefined {
  return typeof id === 'string' ? id.slice(0, ACCOUNT_ID_MAX_LENGTH) : undefined;
}

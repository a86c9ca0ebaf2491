import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import { abortableSleep } from '../http/abortable-sleep.util.js';
import type { ResolvedRateLimitOptions } from '../interfaces/rate-limit-options.interface.js';
import type { RateRedis } from './rate-limit.redis.js';
import { MIN_ATTEMPT_BUDGET_MS, RETRY_AFTER_CAP_MS } from './retry.policy.js';

/** Which budget a request waits for. */
export type RateBudgetName = 'recipients' | 'requests';

/** How a `take` ended: the share was taken, the caller aborted, or the deadline comes first. */
export type RateTake =
  | { readonly kind: 'taken' }
  | { readonly kind: 'aborted' }
  | {
      readonly kind: 'refused';
      readonly budget: RateBudgetName;
      readonly retryAfterMs: number;
      readonly never: boolean;
    };

const TAKEN: RateTake = Object.freeze({ kind: 'taken' });
const ABORTED: RateTake = Object.freeze({ kind: 'aborted' });

/** Most extra ms a waiter sleeps past the window's end, at random, so that waiters do not all wake at once. */
export const RATE_WAKE_JITTER_MS = 20;

/** Pause after a 429 that named no `Retry-After`. */
export const RATE_PAUSE_DEFAULT_MS = 1_000;

interface Budget {
  readonly name: RateBudgetName;
  readonly limit: number;
  readonly limiter: RateLimiterAbstract;
}

/**
 * The `rateLimit` option at work: before each request the loop takes the request's share of every
 * budget (1 request; its recipients), waiting for the next window when a budget is spent, never past
 * the call's deadline. The counting is rate-limiter-flexible's: fixed windows kept in Redis (one Lua
 * `INCRBY` per budget, so every process shares them) or in this process. A 429 that comes anyway
 * blocks every budget for its `Retry-After` (capped), which pauses every process sharing them.
 * Should Redis fail while running, each process counts on its own until it is back (the library's
 * insurance limiter).
 */
export class SendRateLimiter {
  private readonly budgets: readonly Budget[];

  constructor(
    options: ResolvedRateLimitOptions,
    private readonly redis?: RateRedis,
  ) {
    const budgets: Budget[] = [];
    for (const name of ['requests', 'recipients'] as const) {
      const b = options[name];
      if (b === undefined) continue;
      const base = { keyPrefix: `${options.prefix}:${name}`, points: b.limit, duration: b.intervalMs / 1000 };
      const memory = new RateLimiterMemory(base);
      const limiter =
        redis === undefined
          ? memory
          : new RateLimiterRedis({
              ...base,
              storeClient: redis.client,
              rejectIfRedisNotReady: true,
              insuranceLimiter: memory,
            });
      budgets.push({ name, limit: b.limit, limiter });
    }
    this.budgets = budgets;
  }

  /**
   * Takes one request carrying `recipients` from every budget, waiting (a bounded sleep, cut by
   * `signal`) while a budget is spent. Refused at once when the wait would pass `deadline`, or when
   * the request alone is larger than a budget (`never`).
   */
  async take(recipients: number, deadline: number, signal?: AbortSignal): Promise<RateTake> {
    for (;;) {
      const refusal = await this.tryTake(recipients);
      if (refusal === undefined) return TAKEN;
      if (refusal.never) return refusal;
      const wake = refusal.retryAfterMs + Math.floor(Math.random() * RATE_WAKE_JITTER_MS);
      if (Date.now() + wake + MIN_ATTEMPT_BUDGET_MS > deadline) return refusal;
      const end = await abortableSleep(wake, { signal, deadline });
      if (end === 'aborted') return ABORTED;
      if (end === 'deadline') return refusal;
    }
  }

  /**
   * Blocks every budget for `retryAfterMs` (the service's `Retry-After`, 1 s when it gave none,
   * at most `RETRY_AFTER_CAP_MS`), for every process that shares them. Whole seconds, rounded up.
   */
  async pause(retryAfterMs: number | undefined): Promise<void> {
    const ms = Math.min(RETRY_AFTER_CAP_MS, Math.max(retryAfterMs ?? RATE_PAUSE_DEFAULT_MS, 1));
    const seconds = Math.max(1, Math.ceil(ms / 1000));
    await Promise.all(this.budgets.map((b) => b.limiter.block('all', seconds).catch(() => undefined)));
  }

  /** Lets the Redis connection go when the module opened it. */
  async close(): Promise<void> {
    await this.redis?.close();
  }

  /** One round: every budget consumed, or the first refusal (shares already taken are given back). */
  private async tryTake(recipients: number): Promise<Extract<RateTake, { kind: 'refused' }> | undefined> {
    const taken: Budget[] = [];
    for (const b of this.budgets) {
      const points = b.name === 'requests' ? 1 : recipients;
      if (points === 0) continue;
      if (points > b.limit) {
        await this.giveBack(taken, recipients);
        return { kind: 'refused', budget: b.name, retryAfterMs: 0, never: true };
      }
      try {
        await b.limiter.consume('all', points);
        taken.push(b);
      } catch (res) {
        if (!(res instanceof RateLimiterRes)) throw res;
        await this.giveBack(taken, recipients);
        return { kind: 'refused', budget: b.name, retryAfterMs: Math.max(1, res.msBeforeNext), never: false };
      }
    }
    return undefined;
  }

  private async giveBack(taken: readonly Budget[], recipients: number): Promise<void> {
    await Promise.all(
      taken.map((b) =>
        b.limiter.reward('all', b.name === 'requests' ? 1 : recipients).catch(() => undefined),
      ),
    );
  }
}

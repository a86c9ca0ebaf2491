import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import type { ResolvedRateLimitOptions } from '../interfaces/rate-limit-options.interface.js';
import { fitsDeadline, retryAfterPauseMs } from '../policy/delivery.policy.js';
import { realClock, type Clock } from '../time/clock.helpers.js';
import type { RateRedis } from './rate-limit-redis.helpers.js';

/** Which budget a request waits for. */
export type RateBudgetName = 'recipients' | 'requests';

/** How a `take` ended: the share was taken, the caller aborted, or the deadline comes first. */
export type RateTake =
  | { readonly kind: 'taken'; readonly anchor?: () => void }
  | { readonly kind: 'aborted' }
  | {
      readonly kind: 'refused';
      readonly budget: RateBudgetName;
      readonly retryAfterMs: number;
      readonly never: boolean;
      /** With `never`: what the request needs, and the whole budget's limit. */
      readonly size?: { readonly needs: number; readonly limit: number };
    };

const TAKEN: RateTake = Object.freeze({ kind: 'taken' });
const ABORTED: RateTake = Object.freeze({ kind: 'aborted' });

/** Most extra ms a waiter sleeps past the window's end, at random, so that waiters do not all wake at once. */
export const RATE_WAKE_JITTER_MS = 20;

/**
 * How much longer than `intervalMs` each window is kept. The service's window opens when its first
 * request arrives, after ours opened on our first count; every window is also re-anchored on its first
 * answer (see `anchor`), which covers any delay on the way, and this margin covers the rest.
 */
export const RATE_WINDOW_MARGIN_MS = 25;

/** The margin of a shared window, which its re-anchoring already keeps past the service's. */
export const RATE_SHARED_WINDOW_MARGIN_MS = 5;

/**
 * The last ms of a busy window (more than half of it used) in which no request is let through (its
 * share is given back and it waits for the next window): a request counted at the very end of our window
 * could reach the service after the service's window ended, open its next window early, and make our next
 * window's requests overflow it. A window less than half used lets requests through to its end: the next
 * one is unlikely to be full, and light traffic is not delayed.
 */
export const RATE_TAIL_GUARD_MS = 200;

/**
 * The library's counting script with the window in milliseconds (`PX`) instead of whole seconds
 * (`EX`): KEYS[1] the budget's key; ARGV[1] the points to add; ARGV[4] the window in seconds, as the
 * library passes its `duration` (fractional here).
 */
const COUNT_IN_MS_WINDOW = `local ms = math.floor(tonumber(ARGV[4]) * 1000 + 0.5)
redis.call('set', KEYS[1], 0, 'PX', ms, 'NX')
local consumed = redis.call('incrby', KEYS[1], ARGV[1])
local ttl = redis.call('pttl', KEYS[1])
if ttl == -1 then
  redis.call('pexpire', KEYS[1], ms)
  ttl = ms
end
return {consumed, ttl}`;

interface Budget {
  readonly name: RateBudgetName;
  readonly limit: number;
  readonly limiter: RateLimiterAbstract;
  /** The window's length, margin included, in ms. */
  readonly windowMs: number;
  /** Counting in this process: the current window, as the library and `anchor` see it. */
  window: InProcessWindow;
}

/**
 * A window counted in this process: the library ends it `windowMs` after its first count (`counted`);
 * once its first answer came, it ends `windowMs` after that answer instead (`anchored`). In between,
 * no share is taken, as if the library's window were still full.
 */
interface InProcessWindow {
  readonly counted: number;
  anchored: number;
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
    /** Time and waits for the next window: a spec's clock may replace the real one. */
    private readonly clock: Clock = realClock,
  ) {
    const budgets: Budget[] = [];
    for (const name of ['requests', 'recipients'] as const) {
      const b = options[name];
      if (b === undefined) continue;
      const windowMs =
        b.intervalMs + (redis === undefined ? RATE_WINDOW_MARGIN_MS : RATE_SHARED_WINDOW_MARGIN_MS);
      const duration = windowMs / 1000;
      const base = { keyPrefix: `${options.prefix}:${name}`, points: b.limit, duration };
      const memory = new RateLimiterMemory(base);
      const limiter =
        redis === undefined
          ? memory
          : new RateLimiterRedis({
              ...base,
              storeClient: redis.client,
              customIncrTtlLuaScript: COUNT_IN_MS_WINDOW,
              rejectIfRedisNotReady: true,
              insuranceLimiter: memory,
            });
      budgets.push({ name, limit: b.limit, limiter, windowMs, window: { counted: 0, anchored: 0 } });
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
      if (Array.isArray(refusal))
        return refusal.length === 0 ? TAKEN : { kind: 'taken', anchor: this.anchor(refusal) };
      if (refusal.never) return refusal;
      const wake = refusal.retryAfterMs + Math.floor(Math.random() * RATE_WAKE_JITTER_MS);
      if (!fitsDeadline(this.clock.now(), wake, deadline)) return refusal;
      const end = await this.clock.sleep(wake, { signal, deadline });
      if (end === 'aborted') return ABORTED;
      if (end === 'deadline') return refusal;
    }
  }

  /**
   * Blocks every budget for `retryAfterMs` (`retryAfterPauseMs` of the table: the service's `Retry-After`,
   * 1 s when it gave none, at most the cap), for every process that shares them. Whole seconds, rounded up.
   */
  async pause(retryAfterMs: number | undefined): Promise<void> {
    const ms = retryAfterPauseMs(retryAfterMs);
    const seconds = Math.max(1, Math.ceil(ms / 1000));
    await Promise.all(this.budgets.map((b) => b.limiter.block('all', seconds).catch(() => undefined)));
  }

  /** Lets the Redis connection go when the module opened it. */
  async close(): Promise<void> {
    await this.redis?.close();
  }

  /**
   * Our windows start when their first request is counted, but the service's when that request reaches
   * it, which a slow network or a busy process can delay by far more than the margin: once the first
   * request of a window has its answer, the window is made to end `windowMs` from then, so that it
   * cannot end before the service's. In Redis, its expiry moves (a failure leaves it as it was); in
   * this process, the window's `anchored` end.
   */
  private anchor(opened: readonly Budget[]): () => void {
    const windows = opened.map((b) => b.window);
    return () => {
      if (this.redis === undefined) {
        const now = this.clock.now();
        opened.forEach((b, i) => (windows[i].anchored = Math.max(windows[i].anchored, now + b.windowMs)));
        return;
      }
      const client = this.redis.client;
      if (client.status !== 'ready') return; // counting in-process meanwhile
      for (const b of opened) client.pexpire(b.limiter.getKey('all'), b.windowMs).catch(() => undefined);
    };
  }

  /** Counting in this process: ms until the window's anchored end, once the library's has passed (else 0). */
  private heldMs(b: Budget): number {
    if (this.redis !== undefined) return 0;
    const now = this.clock.now();
    return now >= b.window.counted + b.windowMs && now < b.window.anchored ? b.window.anchored - now : 0;
  }

  /**
   * One round: every budget consumed (the list of those whose window this request opened), or the
   * first refusal (shares already taken are given back).
   */
  private async tryTake(recipients: number): Promise<Extract<RateTake, { kind: 'refused' }> | Budget[]> {
    const taken: Budget[] = [];
    const opened: Budget[] = [];
    for (const b of this.budgets) {
      const points = b.name === 'requests' ? 1 : recipients;
      if (points === 0) continue;
      if (points > b.limit) {
        await this.giveBack(taken, recipients);
        const size = { needs: points, limit: b.limit };
        return { kind: 'refused', budget: b.name, retryAfterMs: 0, never: true, size };
      }
      const held = this.heldMs(b);
      if (held > 0) {
        await this.giveBack(taken, recipients);
        return { kind: 'refused', budget: b.name, retryAfterMs: held, never: false };
      }
      const countedAt = this.clock.now(); // at or before the library's count: its window ends no sooner
      try {
        const res = await b.limiter.consume('all', points);
        taken.push(b);
        if (
          res.msBeforeNext >= 0 &&
          res.msBeforeNext < RATE_TAIL_GUARD_MS &&
          res.consumedPoints * 2 > b.limit
        ) {
          await this.giveBack(taken, recipients);
          return {
            kind: 'refused',
            budget: b.name,
            retryAfterMs: Math.max(1, res.msBeforeNext),
            never: false,
          };
        }
        if (res.isFirstInDuration) {
          opened.push(b);
          if (this.redis === undefined) b.window = { counted: countedAt, anchored: 0 };
        }
      } catch (res) {
        if (!(res instanceof RateLimiterRes)) throw res;
        await this.giveBack(taken, recipients);
        return { kind: 'refused', budget: b.name, retryAfterMs: Math.max(1, res.msBeforeNext), never: false };
      }
    }
    return opened;
  }

  private async giveBack(taken: readonly Budget[], recipients: number): Promise<void> {
    await Promise.all(
      taken.map((b) =>
        b.limiter.reward('all', b.name === 'requests' ? 1 : recipients).catch(() => undefined),
      ),
    );
  }
}

import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import type { ResolvedRateLimitOptions } from '../interfaces/rate-limit-options.interface.js';
import { fitsDeadline, retryAfterPauseMs } from '../policy/delivery.policy.js';
import { realClock, withTimeout, type Clock } from '../time/clock.helpers.js';
import type { RateRedis } from './rate-limit-redis.helpers.js';

/** Which budget a request waits for; `'paused'`: an account's pause after a 429. */
export type RateBudgetName = 'recipients' | 'requests' | 'paused';

/** Whose budgets a limiter counts: one account's (a call made with `{ account }`), or the module's. */
export type RateOwner = 'account' | 'module';

/** How a `take` ended: the share was taken, the caller aborted, or the deadline comes first. */
export type RateTake =
  | { readonly kind: 'taken'; readonly anchor?: () => void }
  | { readonly kind: 'aborted' }
  | {
      readonly kind: 'refused';
      readonly budget: RateBudgetName;
      readonly owner: RateOwner;
      readonly retryAfterMs: number;
      readonly never: boolean;
      /** With `never`: what the request needs, and the whole budget's limit. */
      readonly size?: { readonly needs: number; readonly limit: number };
    };

type Refusal = Extract<RateTake, { kind: 'refused' }>;

const TAKEN: RateTake = Object.freeze({ kind: 'taken' });

/** How long a slot may take to come from Redis before this process hands it out on its own. */
export const RATE_SLOT_TIMEOUT_MS = 1_000;

/** The spacing of slots of an account without budgets (`reserve` after its pause), so its end is not one stampede. */
export const RATE_SLOT_MIN_MS = 5;

/**
 * Hands out the next slot of a line shared by every process. The line is a sorted set of the jobs waiting in it
 * (member: the job, score: its slot's start), so that it counts only jobs that will come back: a job that leaves
 * it (it got room, it was cancelled or moved: `release`) takes its slot out, and a slot whose time is over goes by
 * itself. KEYS[1] the line; ARGV[1] the earliest start wanted (epoch ms), ARGV[2] a slot's length in ms, ARGV[3]
 * how long the key lives past the last slot, ARGV[4] the job, ARGV[5] now (ms). The job's slot comes one slot per
 * job still waiting after the line's head (now, or its first slot when that lies ahead: a pause's end), never
 * before the earliest wanted: so a job cancelled in the middle of the line shortens it for the jobs that come
 * next. Returns the slot's start, as text (a float).
 */
const NEXT_SLOT = `local now = tonumber(ARGV[5])
local len = tonumber(ARGV[2])
redis.call('zremrangebyscore', KEYS[1], '-inf', now - len)
redis.call('zrem', KEYS[1], ARGV[4])
local waiting = redis.call('zcard', KEYS[1])
local head = now
if waiting > 0 then
  head = math.max(now, tonumber(redis.call('zrange', KEYS[1], 0, 0, 'WITHSCORES')[2]))
end
local start = math.max(tonumber(ARGV[1]), head + waiting * len)
redis.call('zadd', KEYS[1], start, ARGV[4])
local last = tonumber(redis.call('zrange', KEYS[1], -1, -1, 'WITHSCORES')[2])
redis.call('pexpire', KEYS[1], math.max(1, math.floor(last - now + len + tonumber(ARGV[3]))))
return tostring(start)`;
const ABORTED: RateTake = Object.freeze({ kind: 'aborted' });

/**
 * Moves a shared window's end to ARGV[1] ms from now, only when that is later than its end now: KEYS[1] the
 * budget's key. Never earlier: a 429's pause written meanwhile (by any process) blocks the same key for longer.
 */
const EXTEND_WINDOW = `local ttl = redis.call('pttl', KEYS[1])
if ttl >= 0 and ttl < tonumber(ARGV[1]) then redis.call('pexpire', KEYS[1], ARGV[1]) end
return ttl`;

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
  /** An account's limiter: its pause after a 429 (blocked for the pause), apart from its budgets. */
  private readonly paused?: RateLimiterAbstract;
  /** An account's limiter: the module's budgets (over every account), taken after the account's own. */
  private readonly parent: SendRateLimiter | null;
  private readonly owner: RateOwner;
  /** The key of this limiter's line of slots (`reserve`), and the line when counting in this process. */
  private readonly slotKey: string;
  private readonly slots = new Map<string, number>();
  /** Epoch ms until which this process's counts matter (a window or a pause counted here still runs). */
  private countedUntil = 0;

  constructor(
    options: Pick<ResolvedRateLimitOptions, 'recipients' | 'requests' | 'prefix'>,
    private readonly redis?: RateRedis,
    /** Time and waits for the next window: a spec's clock may replace the real one. */
    private readonly clock: Clock = realClock,
    /**
     * Given for one account's limiter: the module's limiter (null without a module `rateLimit`), and whose
     * refusals it gives (`'module'` for the module's own key among accounts; `'account'` by default).
     */
    account?: { parent: SendRateLimiter | null; owner?: RateOwner },
  ) {
    this.owner = account === undefined ? 'module' : (account.owner ?? 'account');
    this.parent = account?.parent ?? null;
    this.slotKey = `${options.prefix}:slots`;
    if (account !== undefined) {
      const base = { keyPrefix: `${options.prefix}:paused`, points: 1, duration: 1 };
      const memory = new RateLimiterMemory(base);
      this.paused =
        redis === undefined
          ? memory
          : new RateLimiterRedis({ ...base, storeClient: redis.client, insuranceLimiter: memory });
    }
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
      if (refusal.kind === 'taken') return refusal;
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
    this.countedUntil = Math.max(this.countedUntil, this.clock.now() + seconds * 1000);
    // An account's 429 pauses that account only (the module's own key among accounts is one of them):
    // its pause, and its own budgets; never the module's budgets over every account.
    const limiters = this.budgets.map((b) => b.limiter);
    if (this.paused !== undefined) limiters.push(this.paused);
    await Promise.all(limiters.map((l) => l.block('all', seconds).catch(() => undefined)));
  }

  /**
   * How long, in ms, until a request carrying `recipients` could be let through, without taking anything
   * (`ms` 0: it could be now), and whether the wait is the account's pause after a 429 (`paused`) rather than
   * a window with no room. Counts the account's pause, its budgets and the module's. What a job of a busy
   * account asks before it takes a worker: it waits outside the worker instead (see `reserve`).
   */
  async roomIn(recipients: number): Promise<{ ms: number; paused: boolean }> {
    let wait = 0;
    try {
      const pause = this.paused === undefined ? null : await this.paused.get('all');
      if (pause !== null && pause.consumedPoints > 1)
        return { ms: Math.max(1, pause.msBeforeNext), paused: true };
      for (const b of this.budgets) {
        const points = b.name === 'requests' ? 1 : recipients;
        if (points === 0 || points > b.limit) continue; // never fits: the attempt itself says so
        const held = this.heldMs(b);
        const res = await b.limiter.get('all');
        const full = res !== null && res.consumedPoints + points > b.limit;
        wait = Math.max(wait, held, full ? Math.max(1, res.msBeforeNext) : 0);
      }
    } catch {
      return { ms: 0, paused: false }; // the store cannot tell: the attempt's own `take` decides
    }
    if (wait > 0 || this.parent === null) return { ms: wait, paused: false };
    return this.parent.roomIn(recipients);
  }

  /**
   * The start (epoch ms) of `member`'s slot (a job of this account, due and without room now), at or after
   * `earliest`, in a line shared by every process: each slot is as long as the budgets take to refill for
   * `recipients` (at least `RATE_SLOT_MIN_MS`). Jobs of a busy account come back one slot apart, at the pace its
   * budget allows, instead of all at once at the next window (a backlog of thousands would otherwise take every
   * worker each time a window opens). The line counts only the jobs waiting in it (see `NEXT_SLOT`): a job asks
   * for a slot only once it is due, and leaves the line with `release`.
   */
  async reserve(recipients: number, earliest: number, member: string): Promise<number> {
    // The budgets' pace (fractions of a ms allowed); without budgets (an account's pause only), a short spacing.
    let length = this.budgets.length === 0 ? RATE_SLOT_MIN_MS : 0;
    for (const b of this.budgets) {
      const points = b.name === 'requests' ? 1 : recipients;
      length = Math.max(length, (points * b.windowMs) / b.limit);
    }
    const now = this.clock.now();
    const client = this.redis?.client;
    if (client !== undefined && client.status === 'ready') {
      try {
        const slot = client.eval(NEXT_SLOT, 1, this.slotKey, earliest, length, 60_000, member, now);
        return Number(await withTimeout(slot, RATE_SLOT_TIMEOUT_MS, 'Redis'));
      } catch {
        // counted in this process below, as the budgets are while Redis is away
      }
    }
    // The same line in this process.
    this.slots.delete(member);
    let first = Infinity;
    for (const [job, at] of this.slots) {
      if (at <= now - length) this.slots.delete(job);
      else first = Math.min(first, at);
    }
    const head = first === Infinity ? now : Math.max(now, first);
    const start = Math.max(earliest, head + this.slots.size * length);
    this.slots.set(member, start);
    return start;
  }

  /**
   * Takes `member` out of the line (it got room and sends now, or it was cancelled or moved): the jobs that ask
   * for a slot after it come that much sooner. Never throws; a slot that stays (Redis did not answer) goes by
   * itself once its time is over.
   */
  async release(member: string): Promise<void> {
    this.slots.delete(member);
    const client = this.redis?.client;
    if (client === undefined || client.status !== 'ready') return;
    await withTimeout(client.zrem(this.slotKey, member), RATE_SLOT_TIMEOUT_MS, 'Redis').catch(
      () => undefined,
    );
  }

  /** The Redis this limiter counts in (the accounts' limiters share the module's), or undefined in-process. */
  get sharedRedis(): RateRedis | undefined {
    return this.redis;
  }

  /**
   * Whether nothing this process counted for the limiter matters any more: every window it opened, its
   * pause have ended by `now`, and no job waits in its line in this process. An account's limiter may then be
   * let go with its account.
   */
  quietAt(now: number): boolean {
    return this.countedUntil <= now && this.slots.size === 0;
  }

  /** Whether this limiter has budgets of its own (a line of slots paces them; without, nothing to pace). */
  get paced(): boolean {
    return this.budgets.length > 0;
  }

  /** The module's limiter behind an account's (null for the module's own, or without a module `rateLimit`). */
  get moduleLimiter(): SendRateLimiter | null {
    return this.parent;
  }

  /** Lets the Redis connection go when the module opened it. */
  async close(): Promise<void> {
    await this.redis?.close();
  }

  /**
   * Our windows start when their first request is counted, but the service's when that request reaches
   * it, which a slow network or a busy process can delay by far more than the margin: once the first
   * request of a window has its answer, the window is made to end `windowMs` from then, so that it
   * cannot end before the service's. In Redis, its expiry moves later, never earlier (a 429's pause on the
   * same key, written meanwhile by any process, outlasts it; a failure leaves it as it was); in this process,
   * the window's `anchored` end.
   */
  private anchor(opened: readonly Budget[]): () => void {
    const windows = opened.map((b) => b.window);
    return () => {
      if (this.redis === undefined) {
        const now = this.clock.now();
        opened.forEach((b, i) => (windows[i].anchored = Math.max(windows[i].anchored, now + b.windowMs)));
        for (const b of opened) this.countedUntil = Math.max(this.countedUntil, now + b.windowMs);
        return;
      }
      const client = this.redis.client;
      if (client.status !== 'ready') return; // counting in-process meanwhile
      for (const b of opened)
        client.eval(EXTEND_WINDOW, 1, b.limiter.getKey('all'), b.windowMs).catch(() => undefined);
    };
  }

  /** Counting in this process: ms until the window's anchored end, once the library's has passed (else 0). */
  private heldMs(b: Budget): number {
    if (this.redis !== undefined) return 0;
    const now = this.clock.now();
    return now >= b.window.counted + b.windowMs && now < b.window.anchored ? b.window.anchored - now : 0;
  }

  /**
   * One round: every budget consumed (an account's, then the module's behind it), with what re-anchors the
   * windows this request opened, or the first refusal (shares already taken are given back).
   */
  private async tryTake(recipients: number): Promise<Refusal | Extract<RateTake, { kind: 'taken' }>> {
    if (this.paused !== undefined) {
      const pause = await this.paused.get('all').catch(() => null);
      if (pause !== null && pause.consumedPoints > 1) return this.refused('paused', pause.msBeforeNext);
    }
    const taken: Budget[] = [];
    const opened: Budget[] = [];
    for (const b of this.budgets) {
      const points = b.name === 'requests' ? 1 : recipients;
      if (points === 0) continue;
      if (points > b.limit) {
        await this.giveBack(taken, recipients);
        const size = { needs: points, limit: b.limit };
        return { kind: 'refused', budget: b.name, owner: this.owner, retryAfterMs: 0, never: true, size };
      }
      const held = this.heldMs(b);
      if (held > 0) {
        await this.giveBack(taken, recipients);
        return this.refused(b.name, held);
      }
      const countedAt = this.clock.now(); // at or before the library's count: its window ends no sooner
      try {
        const res = await b.limiter.consume('all', points);
        taken.push(b);
        this.countedUntil = Math.max(
          this.countedUntil,
          countedAt + b.windowMs + Math.max(0, res.msBeforeNext),
        );
        if (
          res.msBeforeNext >= 0 &&
          res.msBeforeNext < RATE_TAIL_GUARD_MS &&
          res.consumedPoints * 2 > b.limit
        ) {
          await this.giveBack(taken, recipients);
          return this.refused(b.name, res.msBeforeNext);
        }
        if (res.isFirstInDuration) {
          opened.push(b);
          if (this.redis === undefined) b.window = { counted: countedAt, anchored: 0 };
        }
      } catch (res) {
        if (!(res instanceof RateLimiterRes)) throw res;
        await this.giveBack(taken, recipients);
        return this.refused(b.name, res.msBeforeNext);
      }
    }
    const behind = this.parent === null ? TAKEN : await this.parent.tryTake(recipients);
    if (behind.kind === 'refused') {
      await this.giveBack(taken, recipients);
      return behind;
    }
    const own = opened.length === 0 ? undefined : this.anchor(opened);
    const theirs = behind.kind === 'taken' ? behind.anchor : undefined;
    if (own === undefined && theirs === undefined) return TAKEN as Extract<RateTake, { kind: 'taken' }>;
    const anchor = own === undefined ? theirs! : theirs === undefined ? own : () => (own(), theirs());
    return { kind: 'taken', anchor };
  }

  /** A refusal by `budget` of this limiter, with room again in `ms` (at least 1). */
  private refused(budget: RateBudgetName, ms: number): Refusal {
    return { kind: 'refused', budget, owner: this.owner, retryAfterMs: Math.max(1, ms), never: false };
  }

  private async giveBack(taken: readonly Budget[], recipients: number): Promise<void> {
    await Promise.all(
      taken.map((b) =>
        b.limiter.reward('all', b.name === 'requests' ? 1 : recipients).catch(() => undefined),
      ),
    );
  }
}

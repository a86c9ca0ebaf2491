import { SandboxHttpError } from './sandbox.http.js';

interface Window {
  start: number;
  used: number;
}

/**
 * Fixed-window counters (a window opens at the first use after the previous one ended), one per
 * subject (account or key). Over the cap: 429 with `Retry-After` in whole seconds until the window ends.
 *
 * @example
 * new SandboxLimiter(100, 60_000, 'recipient quota').take('acct', 3, Date.now());
 */
export class SandboxLimiter {
  private readonly windows = new Map<string, Window>();
  /** Requests answered 429 by this limiter since the start (or the last `clear`). */
  refused = 0;

  constructor(
    private readonly cap: number,
    private readonly windowMs: number,
    private readonly what: string,
  ) {}

  /** Counts `amount` against `subject`; throws 429 (counting nothing) when it would pass the cap. */
  take(subject: string, amount: number, now: number): void {
    let w = this.windows.get(subject);
    if (!w || now >= w.start + this.windowMs || now < w.start) {
      w = { start: now, used: 0 };
      this.windows.set(subject, w);
    }
    if (w.used + amount > this.cap) {
      this.refused++;
      const seconds = Math.max(1, Math.ceil((w.start + this.windowMs - now) / 1000));
      throw new SandboxHttpError(429, `${this.what} exceeded: ${this.cap} per ${this.windowMs} ms`, {
        'retry-after': String(seconds),
      });
    }
    w.used += amount;
  }

  /** Forgets every window. */
  clear(): void {
    this.windows.clear();
    this.refused = 0;
  }
}

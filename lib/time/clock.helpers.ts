/**
 * Time for the module's waits: the `Clock` every wait of the request loop and the rate limiter uses (a Nest
 * provider a spec can replace), and `withTimeout` for probes and store commands that must end. No decisions
 * here: what to wait for, and how long, is decided in `policy/`.
 */

/** How a sleep ended. */
export type SleepEnd = 'elapsed' | 'aborted' | 'deadline';

/**
 * The time and the waits of one `EmailModule` instance (the loop's backoff and `Retry-After` waits, the
 * rate limiter's). A Nest provider by this class: a spec replaces it with
 * `Test.createTestingModule(...).overrideProvider(Clock).useValue(myClock)`.
 */
export abstract class Clock {
  /** Epoch ms. */
  abstract now(): number;
  /** Waits `ms`, no later than `deadline` (epoch ms), no longer than until `signal` aborts. Never rejects. */
  abstract sleep(ms: number, until?: { signal?: AbortSignal; deadline?: number }): Promise<SleepEnd>;
}

/** The real clock: `Date.now()` and a timer; the timer and the abort listener are always removed. */
export class RealClock extends Clock {
  now(): number {
    return Date.now();
  }

  sleep(ms: number, until: { signal?: AbortSignal; deadline?: number } = {}): Promise<SleepEnd> {
    const { signal, deadline } = until;
    if (signal?.aborted) return Promise.resolve('aborted');
    const left = deadline === undefined ? Infinity : deadline - Date.now();
    if (left <= 0) return Promise.resolve('deadline');
    const cut = left < ms;
    return new Promise<SleepEnd>((resolve) => {
      const onAbort = (): void => {
        clearTimeout(timer);
        resolve('aborted');
      };
      const timer = setTimeout(
        () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(cut ? 'deadline' : 'elapsed');
        },
        Math.max(0, cut ? left : ms),
      );
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/** The one real clock, for code that runs outside an `EmailModule` instance. */
export const realClock: Clock = new RealClock();

/** `promise`, or a rejection saying `what` took longer than `ms` (a boot or health probe that must end). */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

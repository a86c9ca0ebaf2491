/**
 * Time for the module's waits: the `Clock` every wait of the request loop and the rate limiter uses (a Nest
 * provider a spec can replace), and the one deadline race (`raceDeadline`, with its two common forms
 * `withTimeout` and `settledBy`) for probes, store commands and closes that must end. No decisions here: what
 * to wait for, and how long, is decided in `policy/`.
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

/**
 * Least time a store's connection gets at boot (connecting, then its first answer), whatever a command's
 * deadline: a short command deadline is meant for sends, and a busy host can take longer to accept a connection.
 */
export const BOOT_CONNECT_MIN_MS = 5_000;

/**
 * The module's one deadline race: `promise`, or what `late()` gives once `ms` have passed first (when
 * `late` throws, the race rejects with that error). The timer is cleared as soon as either side ends; a
 * late settlement of `promise` is ignored (its rejection is handled by the race). `keepAlive: false`: the
 * timer never keeps the process alive on its own (a wait during close or boot that outlives the app).
 */
export function raceDeadline<T, L = never>(
  promise: Promise<T>,
  ms: number,
  late: () => L,
  options: { keepAlive?: boolean } = {},
): Promise<T | L> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<L>((resolve, reject) => {
    timer = setTimeout(
      () => {
        try {
          resolve(late());
        } catch (err) {
          reject(err as Error);
        }
      },
      Math.max(0, ms),
    );
    if (options.keepAlive === false) timer.unref();
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

/** `promise`, or a rejection saying `what` took longer than `ms` (a probe or a command that must end). */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return raceDeadline(promise, ms, () => {
    throw new Error(`${what} took longer than ${ms} ms`);
  });
}

/**
 * Waits for `promise` until `deadline` (a `Date.now()` value), never rejecting and never keeping the
 * process alive: true when it settled (resolved or rejected) in time. For close and boot paths.
 */
export function settledBy(promise: Promise<unknown>, deadline: number): Promise<boolean> {
  const settled = promise.then(
    () => true,
    () => true,
  );
  return raceDeadline(settled, deadline - Date.now(), () => false, { keepAlive: false });
}

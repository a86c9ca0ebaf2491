/** How a sleep ended. */
export type SleepEnd = 'elapsed' | 'aborted' | 'deadline';

/**
 * Waits `ms`, but no later than `deadline` (epoch ms) and no longer than until `signal` aborts.
 * Never rejects; the timer and the abort listener are always removed.
 *
 * @example
 * const end = await abortableSleep(400, { signal, deadline }); // 'elapsed' | 'aborted' | 'deadline'
 */
export function abortableSleep(
  ms: number,
  options: { signal?: AbortSignal; deadline?: number } = {},
): Promise<SleepEnd> {
  const { signal, deadline } = options;
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

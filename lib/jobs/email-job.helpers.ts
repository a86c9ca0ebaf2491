import { createHash } from 'node:crypto';

/** The SHA-256 of a value as JSON with sorted keys: the same input gives the same fingerprint in every process. */
export function fingerprintOf(value: unknown): string {
  const canonical = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(canonical)
      : v !== null && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
          )
        : v;
  return createHash('sha256')
    .update(JSON.stringify(canonical(value)))
    .digest('hex');
}

/** Waits for `promise` until `deadline` (a Date.now() value), never rejecting. True when it settled. */
export async function settledBy(promise: Promise<unknown>, deadline: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()));
  });
  const done = promise.then(
    () => true as const,
    () => true as const,
  );
  return Promise.race([done, late]).finally(() => clearTimeout(timer));
}

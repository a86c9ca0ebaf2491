import { createHash, randomUUID } from 'node:crypto';

// What makes a job the same job in every process: its id (fixed before anything is written), the
// idempotency key derived from it, and the fingerprint of its input.

/**
 * An idempotency key derived from stable parts (a queue name and a job id, say): the same parts give
 * the same key in every process, two different lists of parts never give one key (the parts are
 * JSON-encoded, then hashed with SHA-256), and the key is always valid for the service (`nteq_` + 64 hex).
 *
 * @example
 * const key = idempotencyKeyFrom('welcome', job.id);
 * await email.send(input, { idempotencyKey: key });
 * @publicApi
 */
export function idempotencyKeyFrom(...parts: Array<string | number>): string {
  if (parts.length === 0) throw new TypeError('idempotencyKeyFrom needs at least one part');
  for (const part of parts) {
    if (typeof part !== 'string' && !(typeof part === 'number' && Number.isFinite(part))) {
      throw new TypeError(`idempotencyKeyFrom parts must be strings or finite numbers (got ${typeof part})`);
    }
  }
  const digest = createHash('sha256')
    .update(JSON.stringify(parts.map(String)))
    .digest('hex');
  return `nteq_${digest}`;
}

/** A random job id for a job queued without one (never BullMQ's counter, which restarts after a flush). */
export function randomJobId(): string {
  return `email_${randomUUID()}`;
}

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

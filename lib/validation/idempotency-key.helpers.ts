import { randomUUID } from 'node:crypto';

/** The contract's pattern for `Idempotency-Key`: 16 to 128 of letters, digits, `_`, `:`, `-`. */
export const IDEMPOTENCY_KEY_PATTERN = /^[-A-Za-z0-9_:]{16,128}$/;

/**
 * True when `key` is acceptable to the service as an `Idempotency-Key`.
 */
export function isValidIdempotencyKey(key: unknown): key is string {
  return typeof key === 'string' && IDEMPOTENCY_KEY_PATTERN.test(key);
}

/**
 * A fresh random key (`nte_` + UUID v4, 40 characters), made once per logical send and reused on each retry.
 *
 * @example
 * const key = generateIdempotencyKey(); // 'nte_3f0c...'
 */
export function generateIdempotencyKey(): string {
  return `nte_${randomUUID()}`;
}

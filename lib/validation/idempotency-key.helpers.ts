import { randomFillSync } from 'node:crypto';

/** The contract's pattern for `Idempotency-Key`: 16 to 128 of letters, digits, `_`, `:`, `-`. */
export const IDEMPOTENCY_KEY_PATTERN = /^[-A-Za-z0-9_:]{16,128}$/;

/**
 * True when `key` is acceptable to the service as an `Idempotency-Key`.
 */
export function isValidIdempotencyKey(key: unknown): key is string {
  return typeof key === 'string' && IDEMPOTENCY_KEY_PATTERN.test(key);
}

/** Keys' worth of random bytes drawn from the system's CSPRNG at once (16 bytes each). */
const POOL_KEYS = 256;
const pool = Buffer.alloc(16 * POOL_KEYS);
let nextKey = POOL_KEYS;
/** The character codes of the hex digits. */
const HEX = Uint8Array.from('0123456789abcdef', (c) => c.charCodeAt(0));
const DASH = 0x2d;

/** The character code of the high (`hi`) or low (`lo`) hex digit of a byte. */
const hi = (byte: number): number => HEX[byte >> 4]!;
const lo = (byte: number): number => HEX[byte & 15]!;

/**
 * A fresh random key (`nte_` + UUID v4, 40 characters), made once per logical send and reused on each retry.
 * The UUID is made as `crypto.randomUUID` makes it (122 bits from the CSPRNG, drawn for 256 keys at a
 * time; version 4, variant 10), and the key is one flat string made from its 40 character codes at once
 * (`randomUUID` makes about 20 strings; a buffer written in place and decoded costs a call into C++).
 *
 * @example
 * const key = generateIdempotencyKey(); // 'nte_3f0c...'
 */
export function generateIdempotencyKey(): string {
  if (nextKey === POOL_KEYS) {
    randomFillSync(pool);
    nextKey = 0;
  }
  const p = pool;
  const at = nextKey++ * 16;
  const version = (p[at + 6]! & 0x0f) | 0x40; // version 4
  const variant = (p[at + 8]! & 0x3f) | 0x80; // variant 10
  // prettier-ignore
  return String.fromCharCode(
    0x6e, 0x74, 0x65, 0x5f, // nte_
    hi(p[at]!), lo(p[at]!), hi(p[at + 1]!), lo(p[at + 1]!),
    hi(p[at + 2]!), lo(p[at + 2]!), hi(p[at + 3]!), lo(p[at + 3]!), DASH,
    hi(p[at + 4]!), lo(p[at + 4]!), hi(p[at + 5]!), lo(p[at + 5]!), DASH,
    hi(version), lo(version), hi(p[at + 7]!), lo(p[at + 7]!), DASH,
    hi(variant), lo(variant), hi(p[at + 9]!), lo(p[at + 9]!), DASH,
    hi(p[at + 10]!), lo(p[at + 10]!), hi(p[at + 11]!), lo(p[at + 11]!),
    hi(p[at + 12]!), lo(p[at + 12]!), hi(p[at + 13]!), lo(p[at + 13]!),
    hi(p[at + 14]!), lo(p[at + 14]!), hi(p[at + 15]!), lo(p[at + 15]!),
  );
}

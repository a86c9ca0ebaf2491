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
/** The key's text, written in place: one string made per key (`randomUUID` makes about 20). */
const text = Buffer.from('nte_00000000-0000-4000-8000-000000000000', 'latin1');
const HEX = Buffer.from('0123456789abcdef', 'latin1');
/** Where the 32 hex digits go in `text`, two per random byte. */
const DIGIT_AT: number[] = [];
for (let i = 4; i < text.length; i++) if (text[i] !== 0x2d) DIGIT_AT.push(i);

/**
 * A fresh random key (`nte_` + UUID v4, 40 characters), made once per logical send and reused on each retry.
 * The UUID is made as `crypto.randomUUID` makes it (122 bits from the CSPRNG, drawn for 256 keys at a
 * time; version 4, variant 10), written straight into one string.
 *
 * @example
 * const key = generateIdempotencyKey(); // 'nte_3f0c...'
 */
export function generateIdempotencyKey(): string {
  if (nextKey === POOL_KEYS) {
    randomFillSync(pool);
    nextKey = 0;
  }
  const base = nextKey++ * 16;
  for (let i = 0; i < 16; i++) {
    let b = pool[base + i];
    if (i === 6)
      b = (b & 0x0f) | 0x40; // version 4
    else if (i === 8) b = (b & 0x3f) | 0x80; // variant 10
    text[DIGIT_AT[2 * i]] = HEX[b >> 4];
    text[DIGIT_AT[2 * i + 1]] = HEX[b & 15];
  }
  return text.toString('latin1');
}

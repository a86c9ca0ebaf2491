import {
  generateIdempotencyKey,
  isValidIdempotencyKey,
} from '../../lib/validation/idempotency-key.helpers.js';

describe('generateIdempotencyKey', () => {
  it('makes `nte_` and a UUID v4 (variant 10), valid for the service, never the same twice', () => {
    const uuidV4 = /^nte_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    const keys = new Set<string>();
    // More than one pool of random bytes (256 keys each), so refills are crossed.
    for (let i = 0; i < 2_000; i++) {
      const key = generateIdempotencyKey();
      expect(key).toMatch(uuidV4);
      expect(isValidIdempotencyKey(key)).toBe(true);
      keys.add(key);
    }
    expect(keys.size).toBe(2_000);
  });

  it('draws every random digit from all 16 values', () => {
    // The 30 digits that are not fixed by the version and variant, over many keys.
    const seen = Array.from({ length: 36 }, () => new Set<string>());
    for (let i = 0; i < 1_000; i++) {
      const uuid = generateIdempotencyKey().slice(4);
      for (let at = 0; at < 36; at++) seen[at]!.add(uuid[at]!);
    }
    for (let at = 0; at < 36; at++) {
      if ([8, 13, 18, 23].includes(at)) expect([...seen[at]!]).toEqual(['-']);
      else if (at === 14) expect([...seen[at]!]).toEqual(['4']);
      else if (at === 19) expect([...seen[at]!].sort()).toEqual(['8', '9', 'a', 'b']);
      else expect(seen[at]!.size).toBe(16);
    }
  });
});

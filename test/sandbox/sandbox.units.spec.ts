import { SandboxClock, seededRandom } from '../../lib/testing/index.js';
import { decodedBase64Size, MAX_ATTACHMENT_BYTES } from '../../lib/testing/sandbox.attachments.js';
import { SandboxIdempotency } from '../../lib/testing/sandbox.idempotency.js';
import { SandboxLimiter } from '../../lib/testing/sandbox.limits.js';
import { addressDomain } from '../../lib/testing/sandbox.validation.js';

describe('sandbox building blocks', () => {
  it('seededRandom repeats its sequence for a seed and differs between seeds', () => {
    const a = seededRandom(42);
    const b = seededRandom(42);
    const c = seededRandom(43);
    const seqA = [a(), a(), a()];
    expect([b(), b(), b()]).toEqual(seqA);
    expect(c()).not.toBe(seqA[0]);
    expect(seqA.every((x) => x >= 0 && x < 1)).toBe(true);
  });

  it('decodedBase64Size counts decoded bytes and refuses what is not padded standard base64', () => {
    for (const n of [1, 2, 3, 4, 100]) {
      expect(decodedBase64Size(Buffer.alloc(n).toString('base64'))).toBe(n);
    }
    expect(decodedBase64Size('aGk')).toBe(-1);
    expect(decodedBase64Size('aG k=')).toBe(-1);
    expect(decodedBase64Size('aGk_')).toBe(-1);
    expect(MAX_ATTACHMENT_BYTES).toBe(1_363_148); // 1.3 MiB rounded down to whole bytes, as the client rounds it
  });

  it('addressDomain reads plain and display-name addresses', () => {
    expect(addressDomain('a@Example.COM')).toBe('example.com');
    expect(addressDomain('Shop <orders@shop.test>')).toBe('shop.test');
    expect(addressDomain('no-at-sign')).toBeNull();
    expect(addressDomain('two@@signs.test')).toBeNull();
  });

  it('SandboxLimiter counts within a window and tells how long to wait', () => {
    const limiter = new SandboxLimiter(3, 10_000, 'test');
    limiter.take('s', 2, 0);
    expect(() => limiter.take('s', 2, 2500)).toThrow(expect.objectContaining({ status: 429 }));
    try {
      limiter.take('s', 2, 2500);
    } catch (err) {
      expect((err as { headers: Record<string, string> }).headers['retry-after']).toBe('8');
    }
    limiter.take('s', 1, 2500);
    limiter.take('other', 3, 2500);
    limiter.take('s', 3, 10_000);
  });

  it('SandboxIdempotency forgets the oldest keys past its bound', () => {
    const store = new SandboxIdempotency(60_000, 2);
    for (const [i, key] of ['k1', 'k2', 'k3'].entries()) store.reserve('acct', key, 'h', i + 1, 0)();
    expect(store.lookup('acct', 'k1', 'h', 1)).toBeUndefined();
    expect(store.lookup('acct', 'k3', 'h', 1)).toBe(3);
  });

  it('SandboxClock freezes, moves and runs again', () => {
    const clock = new SandboxClock({ start: '2030-01-01T00:00:00Z', frozen: true });
    const start = Date.parse('2030-01-01T00:00:00Z');
    expect(clock.now()).toBe(start);
    clock.advance(1000);
    expect(clock.date().toISOString()).toBe('2030-01-01T00:00:01.000Z');
    clock.unfreeze();
    expect(clock.now()).toBeGreaterThanOrEqual(start + 1000);
    clock.freeze();
    const frozen = clock.now();
    expect(clock.now()).toBe(frozen);
    expect(() => clock.set('not a date')).toThrow(TypeError);
    expect(() => clock.advance(Number.NaN)).toThrow(TypeError);
  });
});

import fc from 'fast-check';
import { ClaimedRecords } from '../../lib/delivery/claimed-records.store.js';
import type { EmailLog } from '../../lib/index.js';

/** The rule, spelled out plainly: the last `cap` claims in order, the latest claim of an id winning. */
class Reference {
  private readonly claims: Array<{ id: number; time: number }> = [];
  constructor(private readonly cap: number) {}
  claim(id: number, time: number): void {
    if (this.has(id, time)) return;
    this.claims.push({ id, time });
    if (this.claims.length > this.cap) this.claims.shift();
  }
  has(id: number, time: number): boolean {
    for (let i = this.claims.length - 1; i >= 0; i--) {
      if (this.claims[i]!.id === id) return this.claims[i]!.time === time;
    }
    return false;
  }
}

const record = (id: number, time: number) => ({ id, createdAt: new Date(time) }) as EmailLog;

describe('ClaimedRecords (the records sends of this instance were given)', () => {
  it('knows a record by id and creation time, forgets the oldest past its bound', () => {
    const claimed = new ClaimedRecords(3);
    for (const id of [1, 2, 3, 2, 4]) claimed.claim(record(id, 0));
    expect([1, 2, 3, 4].map((id) => claimed.has(record(id, 0)))).toEqual([false, true, true, true]);
    expect(claimed.has(record(4, 1))).toBe(false); // a reset sandbox's id 4 is another record
  });

  it('answers as the plain rule does, over any sequence of claims and questions', () => {
    const id = fc.oneof(
      fc.integer({ min: 1, max: 30 }), // ids that come back
      fc.integer({ min: 1, max: 2000 }), // more ids than the table has places: they share probe runs
      fc.integer({ min: 0, max: 2000 }).map((n) => n * 2 ** 32 + 7), // ids past 32 bits
      fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), // as large as the contract allows
    );
    const step = fc.record({ claim: fc.boolean(), id, time: fc.integer({ min: 0, max: 2 }) });
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 1, max: 20 }), // an account's claims start small and grow to their cap
        fc.array(step, { maxLength: 400 }),
        (cap, first, steps) => {
          const claimed = new ClaimedRecords(cap, first);
          const reference = new Reference(cap);
          for (const s of steps) {
            if (s.claim) {
              claimed.claim(record(s.id, s.time));
              reference.claim(s.id, s.time);
            } else {
              expect(claimed.has(record(s.id, s.time))).toBe(reference.has(s.id, s.time));
            }
          }
          for (const s of steps) expect(claimed.has(record(s.id, s.time))).toBe(reference.has(s.id, s.time));
        },
      ),
      { numRuns: 300 },
    );
  });
});

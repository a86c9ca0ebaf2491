import type { EmailLog } from '../interfaces/email-records.interface.js';

/** How many records a service instance remembers as already returned by a send. */
export const CLAIMED_RECORDS_CAP = 10_000;

/**
 * Records this service instance has already returned from a send, so that the reconciliation of
 * one call never hands out a record another call was given. A record is known by its id and its
 * creation time (a sandbox that was reset reuses ids). Bounded: the oldest are forgotten first.
 */
export class ClaimedRecords {
  /** Claimed id -> its slot in the ring. Small integers only: nothing allocated per claim. */
  private readonly slots = new Map<number, number>();
  /** The claims in claim order, as a ring of (id, creation time): evicting the oldest is O(1). */
  private readonly ids: Float64Array;
  private readonly times: Float64Array;
  private next = 0;

  constructor(private readonly cap = CLAIMED_RECORDS_CAP) {
    this.ids = new Float64Array(cap).fill(Number.NaN);
    this.times = new Float64Array(cap);
  }

  /** Remembers `record` as taken. */
  claim(record: EmailLog): void {
    if (this.has(record)) return;
    const slot = this.next;
    const oldest = this.ids[slot];
    // The oldest claim is forgotten only if it is still the one held for its id.
    if (this.slots.get(oldest) === slot) this.slots.delete(oldest);
    this.ids[slot] = record.id;
    this.times[slot] = record.createdAt.getTime();
    this.slots.set(record.id, slot);
    this.next = (slot + 1) % this.cap;
  }

  /** Whether a send of this instance already got `record`. */
  has(record: EmailLog): boolean {
    const slot = this.slots.get(record.id);
    return slot !== undefined && this.times[slot] === record.createdAt.getTime();
  }
}

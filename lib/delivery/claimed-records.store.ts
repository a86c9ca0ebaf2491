import type { EmailLog } from '../interfaces/email-records.interface.js';

/** How many records a service instance remembers as already returned by a send. */
export const CLAIMED_RECORDS_CAP = 10_000;

/**
 * Records this service instance has already returned from a send, so that the reconciliation of
 * one call never hands out a record another call was given. A record is known by its id and its
 * creation time (a sandbox that was reset reuses ids). Bounded: the oldest are forgotten first.
 */
export class ClaimedRecords {
  private readonly keys = new Set<string>();
  /** The same keys in claim order, as a ring: evicting the oldest is O(1) (a Set's first entry is not). */
  private readonly ring: (string | undefined)[];
  private next = 0;

  constructor(private readonly cap = CLAIMED_RECORDS_CAP) {
    this.ring = new Array<string | undefined>(cap);
  }

  /** Remembers `record` as taken. */
  claim(record: EmailLog): void {
    const key = keyOf(record);
    if (this.keys.has(key)) return;
    const oldest = this.ring[this.next];
    if (oldest !== undefined) this.keys.delete(oldest);
    this.ring[this.next] = key;
    this.next = (this.next + 1) % this.cap;
    this.keys.add(key);
  }

  /** Whether a send of this instance already got `record`. */
  has(record: EmailLog): boolean {
    return this.keys.has(keyOf(record));
  }
}

function keyOf(record: EmailLog): string {
  return `${record.id}@${record.createdAt.getTime()}`;
}

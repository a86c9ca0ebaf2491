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

  constructor(private readonly cap = CLAIMED_RECORDS_CAP) {}

  /** Remembers `record` as taken. */
  claim(record: EmailLog): void {
    const { keys } = this;
    const key = keyOf(record);
    if (keys.has(key)) return;
    keys.add(key);
    if (keys.size > this.cap) keys.delete(keys.values().next().value as string);
  }

  /** Whether a send of this instance already got `record`. */
  has(record: EmailLog): boolean {
    return this.keys.has(keyOf(record));
  }
}

function keyOf(record: EmailLog): string {
  return `${record.id}@${record.createdAt.getTime()}`;
}

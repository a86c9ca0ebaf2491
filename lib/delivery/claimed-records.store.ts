import type { EmailLog } from '../interfaces/email-records.interface.js';

/** How many records a service instance remembers as already returned by a send. */
export const CLAIMED_RECORDS_CAP = 10_000;

/** How many places an account's claims start with: most accounts of a large app send a few emails each. */
export const CLAIMED_RECORDS_FIRST_PLACES = 16;

/**
 * Records this service instance has already returned from a send, so that the reconciliation of
 * one call never hands out a record another call was given. A record is known by its id and its
 * creation time (a sandbox that was reset reuses ids). Bounded: the oldest are forgotten first.
 *
 * Every send claims its record, so nothing here allocates after construction: the claims sit in a ring
 * of typed arrays (claim order, so evicting the oldest is O(1)), found by id through an open-addressed
 * table of ring slots (linear probing, at most a third full, entries removed by shifting back). A `Map`
 * of ten thousand churning entries rebuilt its table in the old generation every few thousand sends.
 *
 * The module's own claims take their `cap` places at once. An account's start with `first` places and
 * double, up to `cap`, while the ring has not yet wrapped (so growing copies the claims in order): an app
 * with thousands of accounts pays for the claims each account made, not for ten thousand places each.
 */
export class ClaimedRecords {
  /** The claims in claim order, as a ring of (id, creation time). */
  private ids!: Float64Array;
  private times!: Float64Array;
  private next = 0;
  /** Ring slot + 1 of the claim held for an id, at that id's probe position (0: empty). */
  private table!: Int32Array;
  private mask = 0;
  private shift = 0;

  constructor(
    private readonly cap = CLAIMED_RECORDS_CAP,
    first = cap,
  ) {
    this.lay(Math.max(1, Math.min(first, cap)));
  }

  /** Remembers `record` as taken. */
  claim(record: EmailLog): void {
    const id = record.id;
    const time = record.createdAt.getTime();
    const at = this.find(id);
    const held = this.table[at]! - 1;
    if (held >= 0 && this.times[held] === time) return;
    if (this.next === this.ids.length && this.ids.length < this.cap) this.grow();
    const slot = this.next;
    const oldest = this.ids[slot]!;
    // The oldest claim is forgotten only if it is still the one held for its id.
    if (oldest === oldest && oldest !== id) {
      const old = this.find(oldest);
      if (this.table[old]! - 1 === slot) this.remove(old);
    }
    this.ids[slot] = id;
    this.times[slot] = time;
    // Found again: removing the oldest may have shifted this id's entry (or the empty place) back.
    this.table[this.find(id)] = slot + 1;
    this.next = slot + 1 === this.cap ? 0 : slot + 1;
  }

  /** Makes `places` empty places, and the table for them (at most a third full). */
  private lay(places: number): void {
    this.ids = new Float64Array(places).fill(Number.NaN);
    this.times = new Float64Array(places);
    let bits = 4;
    while (1 << bits < places * 3) bits++;
    this.table = new Int32Array(1 << bits);
    this.mask = (1 << bits) - 1;
    this.shift = 32 - bits;
  }

  /** Doubles the places (up to `cap`) of a ring that is full and has never wrapped: its claims stay in order. */
  private grow(): void {
    const { ids, times } = this;
    this.lay(Math.min(this.cap, ids.length * 2));
    this.ids.set(ids);
    this.times.set(times);
    for (let slot = 0; slot < ids.length; slot++) this.table[this.find(ids[slot]!)] = slot + 1;
  }

  /** Whether a send of this instance already got `record`. */
  has(record: EmailLog): boolean {
    const held = this.table[this.find(record.id)]! - 1;
    return held >= 0 && this.times[held] === record.createdAt.getTime();
  }

  /** Where `id`'s entry is, or the empty place where it would go. */
  private find(id: number): number {
    let at = this.home(id);
    for (;;) {
      const held = this.table[at]! - 1;
      if (held < 0 || this.ids[held] === id) return at;
      at = (at + 1) & this.mask;
    }
  }

  /** An id's first probe position: its two 32-bit halves mixed (ids are integers, up to 2^53). */
  private home(id: number): number {
    const low = id >>> 0;
    const high = (id / 4294967296) >>> 0;
    return Math.imul(low ^ Math.imul(high, 0x85ebca6b), 0x9e3779b1) >>> this.shift;
  }

  /** Empties `at` and moves back the entries after it that could sit there (no tombstones). */
  private remove(at: number): void {
    const table = this.table;
    let gap = at;
    let probe = (at + 1) & this.mask;
    for (;;) {
      const held = table[probe]! - 1;
      if (held < 0) break;
      const home = this.home(this.ids[held]!);
      // The entry may fill the gap when its home is not in (gap, probe], wrapping round.
      if ((probe - home + table.length) % table.length >= (probe - gap + table.length) % table.length) {
        table[gap] = table[probe]!;
        gap = probe;
      }
      probe = (probe + 1) & this.mask;
    }
    table[gap] = 0;
  }
}

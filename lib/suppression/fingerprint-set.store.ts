/**
 * The local copy's table: 64-bit fingerprints (two 32-bit halves) in an open-addressing hash table with
 * linear probing, each with a reason code and a time, in typed arrays: 17 bytes a slot, at most half of
 * the slots used (about 36 MB for 1,000,000 entries, against 100+ bytes an entry for a `Map` of strings),
 * and a look-up that allocates nothing. Removal shifts the following slots back (no tombstone slots).
 *
 * Reason codes: 0 says the address was removed at `time` (kept so that an older bounced record is not
 * learned again), 1 to 4 a suppression (see `REASONS`) that ends at `time` (0: never).
 */
export class FingerprintSet {
  private hi: Uint32Array;
  private lo: Uint32Array;
  private codes: Uint8Array;
  private times: Float64Array;
  private mask: number;
  /** Slots in use. */
  size = 0;

  constructor(capacity = 1024) {
    const slots = 2 ** Math.ceil(Math.log2(Math.max(16, capacity)));
    this.hi = new Uint32Array(slots);
    this.lo = new Uint32Array(slots);
    this.codes = new Uint8Array(slots);
    this.times = new Float64Array(slots);
    this.mask = slots - 1;
  }

  /** The slot of the fingerprint `(hi, lo)`, or -1. Read its `codeAt` and `timeAt`. */
  find(hi: number, lo: number): number {
    const { mask } = this;
    for (let i = lo & mask; ; i = (i + 1) & mask) {
      const l = this.lo[i];
      if (l === 0) return -1;
      if (l === lo && this.hi[i] === hi) return i;
    }
  }

  codeAt(slot: number): number {
    return this.codes[slot];
  }

  timeAt(slot: number): number {
    return this.times[slot];
  }

  /** Sets the fingerprint's code and time (adding it when absent). */
  put(hi: number, lo: number, code: number, time: number): void {
    if ((this.size + 1) * 2 > this.lo.length) this.grow();
    const { mask } = this;
    let i = lo & mask;
    for (; this.lo[i] !== 0; i = (i + 1) & mask) {
      if (this.lo[i] === lo && this.hi[i] === hi) break;
    }
    if (this.lo[i] === 0) {
      this.size++;
      this.hi[i] = hi;
      this.lo[i] = lo;
    }
    this.codes[i] = code;
    this.times[i] = time;
  }

  /** Forgets the fingerprint; true when it was held. */
  delete(hi: number, lo: number): boolean {
    let i = this.find(hi, lo);
    if (i < 0) return false;
    const { mask } = this;
    // Shift back every slot of the run after `i` that may sit at `i` (its home is not between i and it).
    for (let j = (i + 1) & mask; this.lo[j] !== 0; j = (j + 1) & mask) {
      const home = this.lo[j] & mask;
      const between = i <= j ? i < home && home <= j : i < home || home <= j;
      if (between) continue;
      this.hi[i] = this.hi[j];
      this.lo[i] = this.lo[j];
      this.codes[i] = this.codes[j];
      this.times[i] = this.times[j];
      i = j;
    }
    this.lo[i] = 0;
    this.hi[i] = 0;
    this.size--;
    return true;
  }

  /** Forgets everything, keeping the table's size. */
  clear(): void {
    this.hi.fill(0);
    this.lo.fill(0);
    this.size = 0;
  }

  /** The bytes the table holds. */
  get bytes(): number {
    return this.lo.length * 17;
  }

  private grow(): void {
    const { hi, lo, codes, times } = this;
    const slots = lo.length * 2;
    this.hi = new Uint32Array(slots);
    this.lo = new Uint32Array(slots);
    this.codes = new Uint8Array(slots);
    this.times = new Float64Array(slots);
    this.mask = slots - 1;
    this.size = 0;
    for (let i = 0; i < lo.length; i++) if (lo[i] !== 0) this.put(hi[i], lo[i], codes[i], times[i]);
  }
}

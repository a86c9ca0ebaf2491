import { withTimeout } from '../time/clock.helpers.js';
import { FingerprintSet } from './fingerprint-set.store.js';
import {
  fingerprintHashed,
  fingerprintNormalized,
  fingerprintRecipient,
  FP_HI,
  FP_LO,
  hashedKey,
  normalizeAddress,
  scopeSeed,
} from './suppression-address.helpers.js';
import { accountList, ALL_ACCOUNTS_LIST, decodeEntry, OWN_LIST } from './suppression.constants.js';
import type {
  StoreWatcher,
  StoredEntry,
  SuppressionChange,
  SuppressionStore,
} from './suppression-store.interface.js';

/** How many times a load may find its starting version already gone from the change log before giving up. */
const LOAD_TRIES = 3;

/** Fingerprints of hashed addresses kept per list (`hashAddresses`): the recipients mailed last. */
const HASH_CACHE = 50_000;

/** How long after a failed catch-up the copy tries again. */
const RETRY_MS = 2_000;

/** What the copy tells its owner (for logs and health: counts only, never an address). */
export interface MirrorEvents {
  /** The copy fell behind (notifications lost) or caught up again. */
  trust(trusted: boolean, why: string): void;
  /** The store holds more entries than the copy may: sends it cannot answer read the store. */
  overflow(entries: number): void;
  /** Something failed while catching up (it is tried again at the next notification or check). */
  trouble(why: string): void;
}

/**
 * The local copy of the shared list: every entry's fingerprint with its reason and time, kept current by
 * the store's notifications (applied in version order), read again in full only when the store no longer
 * holds the changes it missed. Answers the send path with no round trip while it is `trusted`: loaded,
 * following every notification, and holding every entry (at most `maxEntries`).
 */
export class SuppressionMirror implements StoreWatcher {
  /** The table the send path reads (replaced whole by a load, never seen half filled). */
  set = new FingerprintSet();
  /** The last version applied. */
  version = 0;
  /** Following the store's notifications with nothing missed. */
  following = false;
  /** Holds every entry of the store (false past `maxEntries`). */
  complete = true;
  /** The module-wide list has held an entry (until then a send does not look there). */
  wide = false;
  /** Fields this process wrote at a version the copy has not reached: older changes do not overwrite them. */
  private readonly ownAhead = new Map<string, number>();
  /** Entries this process could not write yet: applied locally, again after each load. */
  private readonly local = new Map<string, StoredEntry>();
  private readonly seeds = new Map<string, number>();
  /** `hashAddresses`' secret, in a private slot: no inspect output shows it. */
  readonly #secret: string | undefined;
  /** Seeds by account id (no list name built per send). */
  private readonly accountSeeds = new Map<string, number>();
  /** With `hashAddresses`, the fingerprints of the addresses mailed last, per list. */
  private readonly hashCache = new Map<string, Map<string, readonly [number, number]>>();
  private catching?: Promise<boolean>;
  private again = false;
  private closed = false;

  constructor(
    private readonly store: SuppressionStore,
    /** `hashAddresses`' secret: keys are then keyed hashes, fingerprinted from their bytes. */
    secret: string | undefined,
    private readonly maxEntries: number,
    private readonly events: MirrorEvents,
    /** Deadline of one read of the changes (a store that stops answering leaves the copy untrusted). */
    private readonly timeoutMs: number,
  ) {
    this.#secret = secret;
  }

  /** Answers the send path alone: loaded, following, complete. */
  get trusted(): boolean {
    return this.following && this.complete;
  }

  /** The seed of a list's fingerprints in this process. */
  seedOf(list: string): number {
    let seed = this.seeds.get(list);
    if (seed === undefined) this.seeds.set(list, (seed = scopeSeed(list)));
    return seed;
  }

  /**
   * The slot of `recipient` (as a message gives it) in `account`'s list (undefined: the module's own), or in the
   * module-wide list with `wide`; -1 when the copy holds nothing for it. By default no allocation: the
   * recipient is hashed as it is written.
   */
  slotOf(set: FingerprintSet, recipient: string, account: string | undefined, wide: boolean): number {
    const list = wide ? ALL_ACCOUNTS_LIST : account === undefined ? OWN_LIST : undefined;
    if (this.#secret !== undefined) {
      const fp = this.hashedFingerprint(list ?? accountList(account!), normalizeAddress(recipient));
      return set.find(fp[0], fp[1]);
    }
    fingerprintRecipient(recipient, list === undefined ? this.accountSeed(account!) : this.seedOf(list));
    return set.find(FP_HI, FP_LO);
  }

  private accountSeed(account: string): number {
    let seed = this.accountSeeds.get(account);
    if (seed === undefined) this.accountSeeds.set(account, (seed = this.seedOf(accountList(account))));
    return seed;
  }

  /**
   * With `hashAddresses`, the fingerprint of an address in a list: its HMAC (about 2 µs), kept for the
   * addresses this process mailed last (at most `HASH_CACHE` a list), since the same people get mail again.
   */
  private hashedFingerprint(list: string, normalized: string): readonly [number, number] {
    let cache = this.hashCache.get(list);
    if (cache === undefined) this.hashCache.set(list, (cache = new Map()));
    let fp = cache.get(normalized);
    if (fp === undefined) {
      hashedKey(this.#secret!, list, normalized);
      fp = [FP_HI, FP_LO];
      if (cache.size >= HASH_CACHE) cache.clear();
      cache.set(normalized, fp);
    }
    return fp;
  }

  /** Loads everything, then follows the notifications (reading what came while they started). */
  async start(): Promise<void> {
    await this.load();
    if (!(await this.store.watch(this, this.version))) return; // untrusted until `back`
    this.following = await this.catchUp();
  }

  close(): void {
    this.closed = true;
  }

  /** Puts the fingerprint of `field` in `FP_HI`/`FP_LO`; false for a field that is not one of ours. */
  private fingerprintOf(field: string): boolean {
    const nl = field.indexOf('\n');
    if (nl < 0) return false;
    const key = field.slice(nl + 1);
    if (this.#secret !== undefined) return fingerprintHashed(key);
    fingerprintNormalized(key, this.seedOf(field.slice(0, nl)));
    return true;
  }

  /** Sets one entry in the table (or, past `maxEntries`, leaves a new one out and says so). */
  put(field: string, entry: StoredEntry, set = this.set): void {
    if (!this.fingerprintOf(field)) return;
    if (field.charCodeAt(0) === 42 && field.charCodeAt(1) === 10) this.wide = true; // '*\n': the module-wide list
    if (set.size >= this.maxEntries && set.find(FP_HI, FP_LO) < 0) {
      if (this.complete) this.events.overflow(set.size + 1);
      this.complete = false;
      return;
    }
    set.put(FP_HI, FP_LO, entry.code, entry.time);
  }

  /** What this process wrote as `version`: applied now unless the copy already passed it. */
  applyOwn(version: number, ops: ReadonlyArray<{ field: string; entry: StoredEntry }>): void {
    if (version <= this.version) return;
    for (const { field, entry } of ops) {
      this.put(field, entry);
      if (version > this.version + 1)
        this.ownAhead.set(field, Math.max(version, this.ownAhead.get(field) ?? 0));
    }
    if (version === this.version + 1) this.version = version;
  }

  /** Entries the store did not take: refused here at once, and kept through loads until written. */
  holdLocal(ops: ReadonlyArray<{ field: string; entry: StoredEntry }>): void {
    for (const { field, entry } of ops) {
      this.local.set(field, entry);
      this.put(field, entry);
    }
  }

  /** Entries written at last. */
  releaseLocal(fields: readonly string[]): void {
    for (const f of fields) this.local.delete(f);
  }

  // The store's notifications (StoreWatcher) ---------------------------------------------------------

  changes(changes: readonly SuppressionChange[]): void {
    for (const change of changes) {
      if (change.version <= this.version) continue;
      if (change.version !== this.version + 1) return void this.catchUp(); // a gap: read what is missing
      this.apply(change);
    }
  }

  lost(why: string): void {
    if (this.following) this.events.trust(false, why);
    this.following = false;
  }

  behind(): void {
    void this.catchUp();
  }

  back(): void {
    void this.catchUp().then((caughtUp) => {
      if (!caughtUp || this.closed || this.following) return;
      this.following = true;
      this.events.trust(true, 'caught up with the store');
    });
  }

  /**
   * Reads the versions this copy missed (or everything, when the store no longer keeps them), one run at a
   * time; resolves false when the store failed (the copy is then not trusted until the next success).
   */
  catchUp(): Promise<boolean> {
    if (this.catching) {
      this.again = true;
      return this.catching;
    }
    const run = async (): Promise<void> => {
      do {
        this.again = false;
        const missed = await withTimeout(
          this.store.changesSince(this.version),
          this.timeoutMs,
          'reading changes',
        );
        if (missed === null) await this.load();
        else for (const change of missed) if (change.version === this.version + 1) this.apply(change);
      } while (this.again && !this.closed);
    };
    this.catching = run()
      .then(
        () => true,
        (err: unknown) => {
          if (this.following) this.events.trust(false, 'its store failed while the list caught up');
          this.following = false;
          this.events.trouble(err instanceof Error ? err.message : String(err));
          if (!this.closed) setTimeout(() => this.back(), RETRY_MS).unref?.();
          return false;
        },
      )
      .finally(() => (this.catching = undefined));
    return this.catching;
  }

  /** Reads every entry: the version first, then the entries, then the changes made meanwhile. */
  private async load(): Promise<void> {
    for (let tries = 1; ; tries++) {
      const fresh = new FingerprintSet(this.set.size * 2);
      this.complete = true;
      const version = await this.store.snapshot((field, value) => {
        const entry = decodeEntry(value);
        if (entry) this.put(field, entry, fresh);
      });
      for (const [field, entry] of this.local) this.put(field, entry, fresh);
      this.set = fresh;
      this.version = version;
      this.ownAhead.clear();
      const missed = await this.store.changesSince(version);
      if (missed !== null) {
        for (const change of missed) if (change.version === this.version + 1) this.apply(change);
        return;
      }
      if (tries >= LOAD_TRIES) throw new Error('the list changed faster than it could be read');
    }
  }

  private apply(change: SuppressionChange): void {
    for (const { field, value } of change.ops) {
      const ahead = this.ownAhead.get(field);
      if (ahead !== undefined) {
        if (change.version < ahead) continue;
        this.ownAhead.delete(field);
      }
      const entry = decodeEntry(value);
      if (entry) this.put(field, entry);
    }
    this.version = change.version;
  }
}

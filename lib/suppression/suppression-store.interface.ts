/**
 * An entry as every store keeps it, the value of its field `<list>\n<address key>`: a reason code (0: the
 * address was removed; 1 to 4: `REASONS`), when it was added (epoch ms) and a time (a suppression's end, 0
 * for never; a removal's time).
 */
export interface StoredEntry {
  readonly code: number;
  readonly since: number;
  readonly time: number;
}

/** One write of a batch: the entry a field gets. */
export interface SuppressionOp {
  readonly field: string;
  readonly entry: StoredEntry;
  /**
   * Learned from a record last changed at this time: written only when the field holds nothing that
   * suppresses now and nothing that came at or after it (a removal, an end), so that an old bounced
   * record never undoes the app's `remove`.
   */
  readonly learnedAt?: number;
}

/** What a batch of writes became: one version, and which ops were applied (a learned op may not be). */
export interface SuppressionWrite {
  readonly version: number;
  readonly applied: readonly boolean[];
}

/** One version of the list: the fields it wrote and their values (`encodeEntry`). */
export interface SuppressionChange {
  readonly version: number;
  readonly ops: ReadonlyArray<{ readonly field: string; readonly value: string }>;
}

/** What a store tells the local copy. */
export interface StoreWatcher {
  /** Versions in order, as the store's notifications brought them. */
  changes(changes: readonly SuppressionChange[]): void;
  /** The notifications stopped (the connection dropped): the copy can no longer be trusted. */
  lost(why: string): void;
  /** The notifications are back: what came meanwhile must be read (`changesSince`). */
  back(): void;
  /** The store has versions the copy may not have read (a notification that names no change): read them. */
  behind(): void;
}

/** A page of raw entries of one list, in the order of their keys. */
export interface StoredPage {
  readonly fields: string[];
  readonly values: string[];
  /** Whether keys may follow the last one. */
  readonly more: boolean;
}

/**
 * Where the list lives: in memory, in Redis, in PostgreSQL. Every write is one batch under one version,
 * applied atomically and told to every process in version order (the store's own notifications); a process
 * that missed some reads them with `changesSince`, or everything again with `snapshot`.
 */
export interface SuppressionStore {
  readonly kind: 'memory' | 'redis' | 'postgres';
  /** Connects and prepares (tables, scripts); rejects when the store does not answer. */
  open(): Promise<void>;
  /** Whether the store's connection is up now (a cheap, local answer). */
  readonly connected: boolean;
  /** Writes a batch atomically, `now` deciding which learned ops apply. */
  write(ops: readonly SuppressionOp[], now: number): Promise<SuppressionWrite>;
  /** The values of `fields` (null where absent). */
  read(fields: readonly string[]): Promise<Array<string | null>>;
  /** Up to `limit` entries of list `scope` whose keys come after `after` (suppressing or not: the caller filters). */
  page(scope: string, after: string | undefined, limit: number): Promise<StoredPage>;
  /** Calls `each` for every entry; resolves with the version read before the first one. */
  snapshot(each: (field: string, value: string) => void): Promise<number>;
  /** The changes after `version`, in order; null when the store no longer keeps them all. */
  changesSince(version: number): Promise<SuppressionChange[] | null>;
  /**
   * Starts the notifications of the versions after `from` (the last one the copy applied); resolves true
   * once they flow, false when they cannot start now (they are tried again, and `back` tells).
   */
  watch(watcher: StoreWatcher, from: number): Promise<boolean>;
  /** Answers when the store does (health). */
  ping(): Promise<void>;
  /** True for the one caller in `ms` that takes `name` (one sweep per account and interval across processes). */
  claim(name: string, ms: number): Promise<boolean>;
  close(): Promise<void>;
}

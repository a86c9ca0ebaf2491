import type { EmailSuppressionReason } from '../interfaces/suppression.interface.js';
import type { StoredEntry } from './suppression-store.interface.js';

/** The reason of each code (code 0: the address was removed). */
export const REASONS: ReadonlyArray<EmailSuppressionReason | undefined> = [
  undefined,
  'bounced',
  'complained',
  'unsubscribed',
  'manual',
];

/** The code of each reason. */
export const REASON_CODES: Readonly<Record<EmailSuppressionReason, number>> = {
  bounced: 1,
  complained: 2,
  unsubscribed: 3,
  manual: 4,
};

/** The list of the module's own account, the module-wide list, and an account's (`a:<id>`). */
export const OWN_LIST = 'm';
export const ALL_ACCOUNTS_LIST = '*';
export const accountList = (account: string): string => `a:${account}`;

/** The field of an address key in a list. */
export const fieldOf = (list: string, key: string): string => `${list}\n${key}`;

/** Defaults of the `suppression` option. */
export const SUPPRESSION_DEFAULTS = {
  prefix: 'email-suppression',
  schema: 'public',
  maxLocalEntries: 2_000_000,
  commandTimeoutMs: 2_000,
  /** Versions the Redis stream and the PostgreSQL change table keep for processes catching up. */
  keepChanges: 10_000,
  /** Writes of learned entries and of `add`s the store did not take, kept to write again later. */
  maxPending: 10_000,
} as const;

/** An entry as text: `code|since|time`. */
export function encodeEntry(e: StoredEntry): string {
  return `${e.code}|${e.since}|${e.time}`;
}

/** The entry of a stored text, or null when it is not one. */
export function decodeEntry(text: string | null | undefined): StoredEntry | null {
  if (typeof text !== 'string') return null;
  const [code, since, time] = text.split('|').map(Number);
  if (!(code >= 0 && code <= 4) || !Number.isFinite(since) || !Number.isFinite(time)) return null;
  return { code, since, time };
}

/** Whether an entry refuses mail at `now`. */
export const suppresses = (e: StoredEntry, now: number): boolean =>
  e.code > 0 && (e.time === 0 || e.time > now);

/**
 * Whether a learned entry (from a record last changed at `learnedAt`) may replace `current`: nothing
 * refuses now, and nothing came at or after the record (a removal, an end).
 */
export const mayLearnOver = (current: StoredEntry | null, learnedAt: number, now: number): boolean =>
  current === null || (!suppresses(current, now) && current.time < learnedAt);

import type { SandboxCore } from '../sandbox.core.js';
import type { StoredMessage } from '../sandbox.store.js';
import { isRead } from './page.reads.js';

// The page's search box, read as Mailpit reads it: words and "quoted phrases" anywhere, `field:value`
// words for one field, `-` before any of them to leave those messages out. A word whose prefix is none
// of these (`re:order`) is plain text, so a subject with a colon can still be found.

/** The words of a search, by field. */
export type SearchField =
  | 'text'
  | 'from'
  | 'to'
  | 'subject'
  | 'is'
  | 'has'
  | 'before'
  | 'after'
  | 'account'
  | 'template'
  | 'job'
  | 'tag'
  | 'status';

/** One word of a search: what it looks at, the value (lower case), and whether it is negated. */
export interface SearchTerm {
  field: SearchField;
  value: string;
  negated: boolean;
  /** For `before:`/`after:`: the instant, epoch ms. For `template:`: the id. */
  number?: number;
}

/** A search read from the box: its terms, and the words it could not use (said beside the box). */
export interface ParsedSearch {
  terms: SearchTerm[];
  problems: string[];
}

const FIELDS = new Set<string>([
  'from',
  'to',
  'subject',
  'is',
  'has',
  'before',
  'after',
  'account',
  'template',
  'job',
  'tag',
  'status',
]);

/** `-`? `field:`? then a "quoted phrase" (closed or not) or a run of non-spaces. */
const WORD = /(-?)(?:([A-Za-z]+):)?(?:"([^"]*)"?|(\S+))/g;
const DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?$/;

/**
 * The instant `text` names: a date (`2026-11-23`: its start) or a date and time (`2026-11-23T09:30`), in the
 * zone `offsetMinutes` east of UTC (the page's own), or an ISO date-time with its own zone. NaN otherwise.
 */
export function instantOf(text: string, offsetMinutes: number): number {
  const m = DATE.exec(text);
  if (!m) return /(?:Z|[+-]\d{2}:?\d{2})$/i.test(text) && text.includes('T') ? Date.parse(text) : NaN;
  const [y, mo, d, h = '0', mi = '0', s = '0'] = m.slice(1).map((v) => v ?? undefined) as string[];
  const utc = Date.UTC(+y, +mo - 1, +d, +h, +mi, +s);
  const back = new Date(utc);
  // 2026-02-31 is no date: Date.UTC rolls it over.
  if (back.getUTCMonth() !== +mo - 1 || back.getUTCDate() !== +d || +h > 23 || +mi > 59 || +s > 59)
    return NaN;
  return utc - offsetMinutes * 60_000;
}

function termOf(field: SearchField, raw: string, negated: boolean, offset: number): SearchTerm | string {
  const value = raw.toLowerCase();
  const word = `${negated ? '-' : ''}${field}:${raw}`;
  switch (field) {
    case 'is':
      return value === 'read' || value === 'unread'
        ? { field, value, negated }
        : `${word}: is: takes read or unread`;
    case 'has':
      return value === 'attachment' || value === 'attachments'
        ? { field, value: 'attachment', negated }
        : `${word}: has: takes attachment`;
    case 'before':
    case 'after': {
      const number = instantOf(raw, offset);
      return Number.isNaN(number)
        ? `${word}: ${field}: takes a date such as 2026-11-23, or 2026-11-23T09:30`
        : { field, value, negated, number };
    }
    case 'template':
      return /^\d{1,15}$/.test(raw)
        ? { field, value, negated, number: Number(raw) }
        : `${word}: template: takes a template id, e.g. template:1`;
    default:
      return { field, value, negated };
  }
}

/**
 * Reads the search box. `offsetMinutes` is the page's time zone (minutes east of UTC), in which dates
 * without a zone are read. Words it cannot use are left out of the search and named in `problems`.
 *
 * @example
 * parseSearch('from:billing -is:read subject:"reset link" after:2026-11-23', 60)
 */
export function parseSearch(q: string, offsetMinutes = 0): ParsedSearch {
  const terms: SearchTerm[] = [];
  const problems: string[] = [];
  for (const m of q.matchAll(WORD)) {
    const negated = m[1] === '-';
    // `from:` alone (nothing after the colon) comes back as a plain word: it is the field, with no value.
    const bare = m[2] === undefined && m[4] !== undefined ? /^([A-Za-z]+):$/.exec(m[4]) : null;
    const prefix = (m[2] ?? bare?.[1])?.toLowerCase();
    const raw = bare ? '' : (m[3] ?? m[4] ?? '');
    if (prefix !== undefined && FIELDS.has(prefix)) {
      if (raw === '') {
        problems.push(`${m[0]}: give a value after the colon`);
        continue;
      }
      const term = termOf(prefix as SearchField, raw, negated, offsetMinutes);
      if (typeof term === 'string') problems.push(term);
      else terms.push(term);
      continue;
    }
    // Not a field: the whole word (with an unknown prefix and its colon) is text.
    const text = prefix === undefined ? raw : `${m[2]}:${raw}`;
    if (text !== '') terms.push({ field: 'text', value: text.toLowerCase(), negated });
  }
  return { terms, problems };
}

/** What a message offers the search beyond its record: its account name, template and tags. */
export interface SearchableExtras {
  /** The account name the sandbox was given for the key that sent it, or null (the key is its account). */
  account: string | null;
  templateId: number | null;
  attachments: number;
  tags: readonly string[];
}

const has = (value: string | null, part: string) => value !== null && value.toLowerCase().includes(part);

function termMatches(m: StoredMessage, extras: SearchableExtras, t: SearchTerm): boolean {
  const d = m.detail;
  switch (t.field) {
    case 'from':
      return has(d.fromAddress, t.value);
    case 'to':
      return d.toAddresses.some((to) => has(to, t.value));
    case 'subject':
      return has(d.subject, t.value);
    case 'is':
      return isRead(m) === (t.value === 'read');
    case 'has':
      return extras.attachments > 0;
    case 'before':
      return Date.parse(d.createdAt) < (t.number as number);
    case 'after':
      return Date.parse(d.createdAt) >= (t.number as number);
    case 'account':
      return has(extras.account, t.value);
    case 'template':
      return extras.templateId === t.number;
    case 'job':
      return extras.tags.some((tag) => tag.startsWith('job:') && has(tag.slice(4), t.value));
    case 'tag':
      return extras.tags.some((tag) => has(tag, t.value));
    case 'status':
      return d.status.toLowerCase() === t.value;
    default:
      return (
        has(d.subject, t.value) ||
        has(d.fromAddress, t.value) ||
        d.toAddresses.some((to) => has(to, t.value)) ||
        has(d.bodyText, t.value)
      );
  }
}

/** Whether a message matches every term (a negated term: does not match it). */
export function searchMatches(
  m: StoredMessage,
  extras: () => SearchableExtras,
  terms: readonly SearchTerm[],
): boolean {
  let known: SearchableExtras | undefined;
  for (const t of terms) {
    const needs = t.field !== 'text' && t.field !== 'from' && t.field !== 'to' && t.field !== 'subject';
    const x = needs ? (known ??= extras()) : (undefined as unknown as SearchableExtras);
    if (termMatches(m, x, t) === t.negated) return false;
  }
  return true;
}

/**
 * The account name of a message: the `account` the sandbox was given for the key that sent it. A key given
 * without one is its own account, and that name is the key: never shown.
 */
export function accountName(core: SandboxCore, m: StoredMessage): string | null {
  return core.keys.has(m.account) ? null : m.account;
}

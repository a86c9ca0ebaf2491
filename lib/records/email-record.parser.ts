import type { EmailDetail, EmailEvent, EmailLog } from '../interfaces/email-records.interface.js';
import { RecordShapeError } from '../errors/record-shape.error.js';

type Raw = Record<string, unknown>;

function obj(value: unknown, where: string): Raw {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new RecordShapeError(where, 'an object', value);
  }
  return value as Raw;
}

// Each reader takes the value, read by name where the field is known (a load V8 resolves once per
// record shape), and the field's name, used only to name it in an error.

function int(v: unknown, where: string, key: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v))
    throw new RecordShapeError(`${where}.${key}`, 'an integer', v);
  return v;
}

function str(v: unknown, where: string, key: string): string {
  if (typeof v !== 'string') throw new RecordShapeError(`${where}.${key}`, 'a string', v);
  return v;
}

function strOrNull(v: unknown, where: string, key: string): string | null {
  if (v === null) return null;
  if (typeof v !== 'string') throw new RecordShapeError(`${where}.${key}`, 'a string or null', v);
  return v;
}

function bool(v: unknown, where: string, key: string): boolean {
  if (typeof v !== 'boolean') throw new RecordShapeError(`${where}.${key}`, 'a boolean', v);
  return v;
}

/** The number written by the two decimal digits of `text` at `at`, or -1 if one is not a digit. */
function twoDigits(text: string, at: number): number {
  const a = text.charCodeAt(at) - 48;
  const b = text.charCodeAt(at + 1) - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}

/** Days from 1970-01-01 to `day` `month` `year` (proleptic Gregorian; a day past the month's end rolls over, as in `Date.UTC`). */
function daysFromCivil(year: number, month: number, day: number): number {
  // Howard Hinnant's days_from_civil: years start in March, so the leap day ends the year.
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146097 + dayOfEra - 719468;
}

/**
 * Epoch ms of a date-time written `YYYY-MM-DDTHH:mm:ss.sssZ` (as the service and `toISOString` write
 * them, years 100 to 9999), read without the general date parser, which costs several times more and
 * runs twice per record, and without `Date.UTC` (a call into the runtime): plain arithmetic. Any other
 * text gives NaN and goes to `new Date`; where both apply they agree.
 * @internal exported for specs
 */
export function isoTime(text: string): number {
  // `-`, `-`, `T`, `:`, `:`, `.` and `Z` where `toISOString` puts them
  if (text.length !== 24 || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45) return NaN;
  if (text.charCodeAt(10) !== 84 || text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58) return NaN;
  if (text.charCodeAt(19) !== 46 || text.charCodeAt(23) !== 90) return NaN;
  const century = twoDigits(text, 0);
  const yearOfCentury = twoDigits(text, 2);
  const month = twoDigits(text, 5);
  const day = twoDigits(text, 8);
  const hour = twoDigits(text, 11);
  const minute = twoDigits(text, 14);
  const second = twoDigits(text, 17);
  const centiseconds = twoDigits(text, 20); // the first two digits of the milliseconds
  const lastMs = text.charCodeAt(22) - 48;
  if (century < 1 || yearOfCentury < 0 || month < 1 || month > 12 || day < 1 || day > 31) return NaN;
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return NaN;
  if (centiseconds < 0 || lastMs < 0 || lastMs > 9) return NaN;
  const days = daysFromCivil(century * 100 + yearOfCentury, month, day);
  return days * 86_400_000 + ((hour * 60 + minute) * 60 + second) * 1000 + centiseconds * 10 + lastMs;
}

function date(v: unknown, where: string, key: string): Date {
  const fast = typeof v === 'string' ? isoTime(v) : NaN;
  const d = !Number.isNaN(fast) ? new Date(fast) : typeof v === 'string' ? new Date(v) : undefined;
  if (d === undefined || Number.isNaN(d.getTime()))
    throw new RecordShapeError(`${where}.${key}`, 'a date-time', v);
  return d;
}

function dateOrNull(v: unknown, where: string, key: string): Date | null {
  return v === null ? null : date(v, where, key);
}

function strings(v: unknown, where: string, key: string): string[] {
  if (!Array.isArray(v)) throw new RecordShapeError(`${where}.${key}`, 'an array of strings', v);
  for (let i = 0; i < v.length; i++) {
    if (typeof v[i] !== 'string') throw new RecordShapeError(`${where}.${key}[${i}]`, 'a string', v[i]);
  }
  return v.slice() as string[];
}

/** Reads one message record, checking every field the contract requires. */
export function parseEmailLog(value: unknown, where = 'body'): EmailLog {
  const r = obj(value, where);
  let created: Date; // `createdAt`, read in the fields' order (a broken record names its first bad field)
  return {
    id: int(r.id, where, 'id'),
    providerEmailId: strOrNull(r.providerEmailId, where, 'providerEmailId'),
    fromAddress: str(r.fromAddress, where, 'fromAddress'),
    toAddresses: strings(r.toAddresses, where, 'toAddresses'),
    subject: str(r.subject, where, 'subject'),
    status: str(r.status, where, 'status'),
    errorMessage: strOrNull(r.errorMessage, where, 'errorMessage'),
    scheduledAt: dateOrNull(r.scheduledAt, where, 'scheduledAt'),
    trackOpens: bool(r.trackOpens, where, 'trackOpens'),
    trackClicks: bool(r.trackClicks, where, 'trackClicks'),
    openedAt: dateOrNull(r.openedAt, where, 'openedAt'),
    clickedAt: dateOrNull(r.clickedAt, where, 'clickedAt'),
    openCount: int(r.openCount, where, 'openCount'),
    clickCount: int(r.clickCount, where, 'clickCount'),
    createdAt: (created = date(r.createdAt, where, 'createdAt')),
    // A record just made (a send's) was last updated when it was made: the same text is read once.
    updatedAt:
      r.updatedAt === r.createdAt ? new Date(created.getTime()) : date(r.updatedAt, where, 'updatedAt'),
  };
}

/** Reads a message record with its bodies. */
export function parseEmailDetail(value: unknown, where = 'body'): EmailDetail {
  const log = parseEmailLog(value, where);
  const r = value as Raw;
  return {
    ...log,
    html: strOrNull(r.html, where, 'html'),
    bodyText: strOrNull(r.bodyText, where, 'bodyText'),
  };
}

/** Reads one open/click event. */
export function parseEmailEvent(value: unknown, where = 'body'): EmailEvent {
  const r = obj(value, where);
  const type = r.type;
  if (type !== 'open' && type !== 'click')
    throw new RecordShapeError(`${where}.type`, '"open" or "click"', type);
  return {
    id: int(r.id, where, 'id'),
    type,
    url: strOrNull(r.url, where, 'url'),
    occurredAt: date(r.occurredAt, where, 'occurredAt'),
  };
}

/** Reads a JSON array with `item` applied to each element. */
export function parseArray<T>(value: unknown, item: (v: unknown, where: string) => T, where = 'body'): T[] {
  if (!Array.isArray(value)) throw new RecordShapeError(where, 'an array', value);
  const out = new Array<T>(value.length);
  for (let i = 0; i < value.length; i++) out[i] = item(value[i], `${where}[${i}]`);
  return out;
}

/** Reads the answer of a batch send: `{ data: EmailLog[] }`. */
export function parseBatchResponse(value: unknown): EmailLog[] {
  const r = obj(value, 'body');
  return parseArray(r.data, parseEmailLog, 'body.data');
}

import type { EmailDetail, EmailEvent, EmailLog } from '../interfaces/email-records.interface.js';
import { RecordShapeError } from '../errors/record-shape.error.js';

type Raw = Record<string, unknown>;

function obj(value: unknown, where: string): Raw {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new RecordShapeError(where, 'an object', value);
  }
  return value as Raw;
}

function int(raw: Raw, key: string, where: string): number {
  const v = raw[key];
  if (typeof v !== 'number' || !Number.isInteger(v))
    throw new RecordShapeError(`${where}.${key}`, 'an integer', v);
  return v;
}

function str(raw: Raw, key: string, where: string): string {
  const v = raw[key];
  if (typeof v !== 'string') throw new RecordShapeError(`${where}.${key}`, 'a string', v);
  return v;
}

function strOrNull(raw: Raw, key: string, where: string): string | null {
  const v = raw[key];
  if (v === null) return null;
  if (typeof v !== 'string') throw new RecordShapeError(`${where}.${key}`, 'a string or null', v);
  return v;
}

function bool(raw: Raw, key: string, where: string): boolean {
  const v = raw[key];
  if (typeof v !== 'boolean') throw new RecordShapeError(`${where}.${key}`, 'a boolean', v);
  return v;
}

/** The number written by `count` decimal digits of `text` from `at`, or -1 if one is not a digit. */
function digits(text: string, at: number, count: number): number {
  let n = 0;
  for (let i = at; i < at + count; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/**
 * Epoch ms of a date-time written `YYYY-MM-DDTHH:mm:ss.sssZ` (as the service and `toISOString` write
 * them, years 100 to 9999), read without the general date parser, which costs several times more and
 * runs twice per record. Any other text gives NaN and goes to `new Date`; where both apply they agree.
 * @internal exported for specs
 */
export function isoTime(text: string): number {
  // `-`, `-`, `T`, `:`, `:`, `.` and `Z` where `toISOString` puts them
  if (text.length !== 24 || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45) return NaN;
  if (text.charCodeAt(10) !== 84 || text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58) return NaN;
  if (text.charCodeAt(19) !== 46 || text.charCodeAt(23) !== 90) return NaN;
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  const hour = digits(text, 11, 2);
  const minute = digits(text, 14, 2);
  const second = digits(text, 17, 2);
  const ms = digits(text, 20, 3);
  if (year < 100 || month < 1 || month > 12 || day < 1 || day > 31) return NaN;
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59 || ms < 0) return NaN;
  return Date.UTC(year, month - 1, day, hour, minute, second, ms);
}

function date(raw: Raw, key: string, where: string): Date {
  const v = raw[key];
  const fast = typeof v === 'string' ? isoTime(v) : NaN;
  const d = !Number.isNaN(fast) ? new Date(fast) : typeof v === 'string' ? new Date(v) : undefined;
  if (d === undefined || Number.isNaN(d.getTime()))
    throw new RecordShapeError(`${where}.${key}`, 'a date-time', v);
  return d;
}

function dateOrNull(raw: Raw, key: string, where: string): Date | null {
  return raw[key] === null ? null : date(raw, key, where);
}

function strings(raw: Raw, key: string, where: string): string[] {
  const v = raw[key];
  if (!Array.isArray(v)) throw new RecordShapeError(`${where}.${key}`, 'an array of strings', v);
  for (let i = 0; i < v.length; i++) {
    if (typeof v[i] !== 'string') throw new RecordShapeError(`${where}.${key}[${i}]`, 'a string', v[i]);
  }
  return v.slice();
}

/** Reads one message record, checking every field the contract requires. */
export function parseEmailLog(value: unknown, where = 'body'): EmailLog {
  const r = obj(value, where);
  return {
    id: int(r, 'id', where),
    providerEmailId: strOrNull(r, 'providerEmailId', where),
    fromAddress: str(r, 'fromAddress', where),
    toAddresses: strings(r, 'toAddresses', where),
    subject: str(r, 'subject', where),
    status: str(r, 'status', where),
    errorMessage: strOrNull(r, 'errorMessage', where),
    scheduledAt: dateOrNull(r, 'scheduledAt', where),
    trackOpens: bool(r, 'trackOpens', where),
    trackClicks: bool(r, 'trackClicks', where),
    openedAt: dateOrNull(r, 'openedAt', where),
    clickedAt: dateOrNull(r, 'clickedAt', where),
    openCount: int(r, 'openCount', where),
    clickCount: int(r, 'clickCount', where),
    createdAt: date(r, 'createdAt', where),
    updatedAt: date(r, 'updatedAt', where),
  };
}

/** Reads a message record with its bodies. */
export function parseEmailDetail(value: unknown, where = 'body'): EmailDetail {
  const log = parseEmailLog(value, where);
  const r = value as Raw;
  return { ...log, html: strOrNull(r, 'html', where), bodyText: strOrNull(r, 'bodyText', where) };
}

/** Reads one open/click event. */
export function parseEmailEvent(value: unknown, where = 'body'): EmailEvent {
  const r = obj(value, where);
  const type = r.type;
  if (type !== 'open' && type !== 'click')
    throw new RecordShapeError(`${where}.type`, '"open" or "click"', type);
  return {
    id: int(r, 'id', where),
    type,
    url: strOrNull(r, 'url', where),
    occurredAt: date(r, 'occurredAt', where),
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

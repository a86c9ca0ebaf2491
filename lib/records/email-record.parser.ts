import type { EmailDetail, EmailEvent, EmailLog } from '../interfaces/email-records.interface.js';
import { RecordShapeError } from './record-shape.error.js';

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

function date(raw: Raw, key: string, where: string): Date {
  const v = raw[key];
  const d = typeof v === 'string' ? new Date(v) : undefined;
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

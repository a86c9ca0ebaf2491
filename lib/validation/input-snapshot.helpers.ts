import { types } from 'node:util';
import type { EmailValidationIssue } from '../errors/email-validation.error.js';

/** How deep a caller's input may nest (an email is 3 levels: email, attachments, attachment). */
const MAX_DEPTH = 8;

/** Result of {@link snapshotInput}: a plain copy, or the reasons no copy could be made. */
export interface InputSnapshot {
  /** Plain JSON data (plain objects, arrays, strings, finite numbers, booleans, null). */
  value: unknown;
  issues: EmailValidationIssue[];
}

const dateTime = Date.prototype.getTime;
const dateIso = Date.prototype.toISOString;
const ownDescriptor = Object.getOwnPropertyDescriptor;
const unreadable = 'cannot be read (a revoked Proxy?)';

/** A real Date (from any realm), told by its internal slot: no exception thrown per object. */
function isDate(value: object): value is Date {
  return types.isDate(value);
}

/** What `readOwn` and `readThroughTraps` return for an accessor (never called) and for a key gone meanwhile. */
const ACCESSOR = Symbol('accessor');
const GONE = Symbol('gone');

type LookUp = (this: object, key: string) => unknown;
const objectProto = Object.prototype as unknown as { __lookupGetter__: LookUp; __lookupSetter__: LookUp };
const getterOf = objectProto.__lookupGetter__;
const setterOf = objectProto.__lookupSetter__;

/**
 * An own enumerable property of an ordinary object (not a Proxy, so no code of the caller runs here):
 * its value, or ACCESSOR. Asks for the getter and setter, which allocates nothing, rather than for a
 * property descriptor, a new object per key: the snapshot runs on every send. The setter is asked only
 * when the value reads as undefined: a property with a setter and no getter always does, and one with a
 * getter was refused before anything was read.
 */
function readOwn(target: object, key: string): unknown {
  if (getterOf.call(target, key) !== undefined) return ACCESSOR;
  const value = (target as Record<string, unknown>)[key];
  if (value === undefined && setterOf.call(target, key) !== undefined) return ACCESSOR;
  return value;
}

/** A Proxy answers through its traps: one descriptor per key, and its value is the one read. */
function readThroughTraps(target: object, key: string): unknown {
  const d = ownDescriptor(target, key);
  if (d === undefined || !d.enumerable) return GONE;
  return 'value' in d ? d.value : ACCESSOR;
}

/** Where a value sits in the input, rendered into text only when an issue names it. */
interface Path {
  parent: Path | null;
  key: string | number;
}

function render(path: Path | null): string {
  if (path === null) return '';
  const head = render(path.parent);
  if (typeof path.key === 'number') return `${head}[${path.key}]`;
  return head === '' ? path.key : `${head}.${path.key}`;
}

function copy(value: unknown, path: Path | null, depth: number, issues: EmailValidationIssue[]): unknown {
  if (value === null || value === undefined) return value;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return value; // NaN and infinities stay as they are, for the rules to refuse by name
    case 'object':
      break;
    default:
      issues.push({ path: render(path), message: `must be JSON data (got a ${typeof value})` });
      return undefined;
  }
  if (isDate(value)) {
    // The intrinsic, never the object's own toJSON/toISOString: what is checked is what is sent. An invalid
    // Date is refused here, wherever it is: JSON would send it as null, and its text is no date either.
    if (Number.isNaN(dateTime.call(value))) {
      issues.push({ path: render(path), message: 'is an invalid Date' });
      return undefined;
    }
    return dateIso.call(value);
  }
  if (depth >= MAX_DEPTH) {
    issues.push({ path: render(path), message: `nests deeper than ${MAX_DEPTH} levels` });
    return undefined;
  }
  const proxy = types.isProxy(value);
  let keys: string[];
  let array: boolean;
  let length = 0;
  // The reads of the object's shape, each of which a Proxy's trap may make throw (a revoked one always does).
  try {
    if (typeof (value as { toJSON?: unknown }).toJSON === 'function') {
      issues.push({
        path: render(path),
        message:
          'has a toJSON method; pass plain data (call toJSON() or toObject() yourself, then pass the result)',
      });
      return undefined;
    }
    keys = Object.keys(value);
    array = Array.isArray(value);
    if (array)
      length = proxy ? (ownDescriptor(value, 'length')?.value as number) : (value as unknown[]).length;
  } catch {
    issues.push({ path: render(path), message: unreadable });
    return undefined;
  }
  if (array && !proxy && isDense(keys, length))
    return copyDense(value as unknown[], keys, path, depth, issues);
  // A plain literal keeps V8's fast properties (a null-prototype object would be a slow dictionary);
  // `__proto__` is the one key an assignment would misread, so it is defined as own data below.
  const out: Record<string, unknown> | unknown[] = array ? [] : {};
  for (const key of keys) {
    let raw: unknown;
    try {
      raw = proxy ? readThroughTraps(value, key) : readOwn(value, key);
    } catch {
      issues.push({ path: render(path), message: unreadable });
      return undefined;
    }
    if (raw === GONE) continue;
    if (array && !(String(Number(key)) === key && Number(key) < length)) {
      issues.push({
        path: render(path),
        message: `is an array with an extra property ${JSON.stringify(key)}`,
      });
      continue;
    }
    const v = copyValue(raw, path, array ? Number(key) : key, depth, issues);
    if (v === SKIPPED) continue;
    if (array) (out as unknown[])[Number(key)] = v;
    else if (key === '__proto__')
      Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
    else (out as Record<string, unknown>)[key] = v;
  }
  if (array) {
    const list = out as unknown[];
    list.length = length;
    for (let i = 0; i < length; i++) if (!(i in list)) list[i] = undefined; // holes are read as undefined
  }
  return out;
}

/** What `copyValue` returns for a property left out of the copy (its issue is listed). */
const SKIPPED = Symbol('skipped');

/** One property's value, read by `readOwn` or `readThroughTraps`, as the copy holds it. */
function copyValue(
  raw: unknown,
  path: Path | null,
  key: string | number,
  depth: number,
  issues: EmailValidationIssue[],
): unknown {
  if (raw === ACCESSOR) {
    issues.push({
      path: render({ parent: path, key }),
      message: 'is a getter; pass plain data (a value, read once)',
    });
    return SKIPPED;
  }
  const kind = typeof raw;
  // Strings, booleans and numbers are copied as they are; objects and the rest go through `copy`.
  return kind === 'string' || kind === 'boolean' || kind === 'number'
    ? raw
    : copy(raw, { parent: path, key }, depth + 1, issues);
}

/**
 * Whether an array's own enumerable keys are exactly its indices, in order: as many keys as its length,
 * the last of them the last index (indices come first, so every key before it is one, and no other key
 * follows). Nearly every array given (`to`, `attachments`) is such a list.
 */
function isDense(keys: readonly string[], length: number): boolean {
  return keys.length === length && (length === 0 || keys[length - 1] === String(length - 1));
}

/**
 * An ordinary array without holes or extra properties: the general loop's copy, made at its final
 * size, by index, without the checks of keys and holes that cannot apply (the same reads, in order).
 */
function copyDense(
  value: unknown[],
  keys: readonly string[],
  path: Path | null,
  depth: number,
  issues: EmailValidationIssue[],
): unknown {
  const list = new Array<unknown>(value.length);
  for (let i = 0; i < list.length; i++) {
    let raw: unknown;
    try {
      raw = readOwn(value, keys[i]!);
    } catch {
      issues.push({ path: render(path), message: unreadable });
      return undefined;
    }
    const v = copyValue(raw, path, i, depth, issues);
    list[i] = v === SKIPPED ? undefined : v; // a getter is read as undefined, as a hole is
  }
  return list;
}

/**
 * Takes one plain copy of a caller's input, reading each own enumerable property exactly once.
 * Getters, objects with a `toJSON` method (ORM documents, ...), functions, symbols and bigints are refused
 * with an issue naming where they are, so that nothing is read a second time or transformed on the way
 * to the wire; a `Date` becomes its ISO text through the intrinsic `Date.prototype.toISOString` (an invalid
 * one is refused).
 * Class instances and Proxies are read like plain objects: their own enumerable data properties, once.
 * The copy is what gets validated and then serialized byte for byte.
 */
export function snapshotInput(input: unknown): InputSnapshot {
  const issues: EmailValidationIssue[] = [];
  const value = copy(input, null, 0, issues);
  return { value, issues };
}

/** {@link snapshotInput}, its issues added to `issues` (a send's one list): no result object per call. */
export function snapshotInto(input: unknown, issues: EmailValidationIssue[]): unknown {
  return copy(input, null, 0, issues);
}

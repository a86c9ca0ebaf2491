import {
  describe,
  type SandboxLinkMatch,
  type SandboxMessageMatch,
  type SandboxTextMatch,
} from './sandbox.match.js';

/** The criteria a match may hold, in the order messages name them. */
const KEYS = [
  'to',
  'from',
  'subject',
  'text',
  'html',
  'templateId',
  'variables',
  'attachments',
  'status',
  'link',
  'code',
  'codePattern',
] as const;
type Key = (typeof KEYS)[number];

/** The record's own field names, which users write too, and the criterion each one is. */
const ALIASES: Record<string, Key> = {
  toAddresses: 'to',
  fromAddress: 'from',
  bodyText: 'text',
  sentHtml: 'html',
};

const ATTACHMENT_KEYS = ['filename', 'contentType', 'content'];
const LINK_KEYS = ['url', 'text'];

const ACCEPTED = `${KEYS.join(', ')} (or the record's names ${Object.keys(ALIASES).join(', ')})`;

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof RegExp) && !Buffer.isBuffer(v);

const isAsymmetric = (v: unknown): boolean =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as { asymmetricMatch?: unknown }).asymmetricMatch === 'function';

const isText = (v: unknown): v is SandboxTextMatch =>
  typeof v === 'string' || v instanceof RegExp || isAsymmetric(v);

/**
 * Every name an object of criteria gives, as a reader of `obj.name` sees them: its own (enumerable or
 * not) and those it inherits, up to `Object.prototype`; a prototype's `constructor` is no criterion.
 * Symbols come back as their description, so that they are named as unknown criteria.
 */
function namesOf(obj: object): { names: string[]; symbols: string[] } {
  const names: string[] = [];
  const symbols: string[] = [];
  for (let at: object | null = obj; at !== null && at !== Object.prototype; at = Object.getPrototypeOf(at)) {
    for (const name of Object.getOwnPropertyNames(at)) {
      if (at !== obj && name === 'constructor') continue;
      if (!names.includes(name)) names.push(name);
    }
    for (const s of Object.getOwnPropertySymbols(at)) symbols.push(String(s));
  }
  return { names, symbols };
}

/** A plain copy of `obj` with every name it gives (own or inherited, enumerable or not). */
function plainOf(obj: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // Defined, not assigned: a criterion named `__proto__` is a name to check, not a prototype to set.
  for (const name of namesOf(obj).names)
    Object.defineProperty(out, name, {
      value: obj[name],
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return out;
}

/**
 * Checks what a matcher or helper was given and returns it with the record's field names turned into
 * the criteria they stand for (`toAddresses` -> `to`, `bodyText` -> `text`, ...). Throws a `TypeError`
 * that names every problem: a key it does not know (with the keys it accepts), a value left undefined,
 * a value of the wrong type, a list or object that names nothing to check (`to: []`, `variables: {}`),
 * a criterion given twice (`to` and `toAddresses`). A criterion is read as `match.name` reads it: own
 * or inherited, enumerable or not (and so are the names inside `variables` and `attachments`); an
 * asymmetric matcher stands for any value. A matcher that passes has checked every criterion.
 */
export function checkMatch(match: unknown, where: string): SandboxMessageMatch {
  if (match === undefined) return {};
  if (!isPlainObject(match) || isAsymmetric(match)) {
    throw new TypeError(`${where}: a match is an object such as { to, subject } (got ${describe(match)})`);
  }
  const problems: string[] = [];
  const out: Record<string, unknown> = {};
  const unknown: string[] = [];
  const { names, symbols } = namesOf(match);
  for (const name of names) {
    // Own entries only: `constructor` is no alias, whatever Object.prototype holds.
    const alias = Object.hasOwn(ALIASES, name) ? ALIASES[name] : undefined;
    const key: Key | undefined = (KEYS as readonly string[]).includes(name) ? (name as Key) : alias;
    if (key === undefined) {
      unknown.push(name);
      continue;
    }
    if (key in out) {
      problems.push(`${name} and ${key} are the same criterion: give one`);
      continue;
    }
    const value = plainCriterion(key, match[name]);
    const problem = valueProblem(key, value);
    if (problem) problems.push(`${name} ${problem}`);
    else out[key] = value;
  }
  unknown.push(...symbols);
  if (unknown.length > 0) {
    problems.unshift(
      `unknown criteri${unknown.length === 1 ? 'on' : 'a'} ${unknown.map((k) => JSON.stringify(k)).join(', ')}` +
        ` (a match accepts ${ACCEPTED})`,
    );
  }
  if (problems.length > 0) throw new TypeError(`${where}: ${problems.join('; ')}`);
  return out as SandboxMessageMatch;
}

/** The value of a criterion with its objects made plain (`variables`, each attachment's entry). */
function plainCriterion(key: Key, value: unknown): unknown {
  if (key === 'variables' && isPlainObject(value) && !isAsymmetric(value)) return plainOf(value);
  if (key === 'link' && isPlainObject(value) && !isAsymmetric(value)) return plainOf(value);
  if (key === 'attachments' && Array.isArray(value))
    return value.map((entry: unknown) =>
      isPlainObject(entry) && !isAsymmetric(entry) ? plainOf(entry) : entry,
    );
  return value;
}

/** Why the value of criterion `key` cannot be checked, or null. */
function valueProblem(key: Key, value: unknown): string | null {
  if (value === undefined) return 'is undefined: leave it out, or give the value to check';
  const text = 'must be a string, a RegExp or an asymmetric matcher';
  switch (key) {
    case 'to': {
      const list = Array.isArray(value) ? value : [value];
      if (list.length === 0) return 'is empty: list the addresses to check';
      return list.every(isText) ? null : `${text}, or a list of them (got ${describe(value)})`;
    }
    case 'templateId':
      return Number.isInteger(value) || isAsymmetric(value)
        ? null
        : `must be an integer or an asymmetric matcher (got ${describe(value)})`;
    case 'variables': {
      if (isAsymmetric(value)) return null;
      if (!isPlainObject(value))
        return `must be an object of values or an asymmetric matcher (got ${describe(value)})`;
      const names = Object.keys(value);
      if (names.length === 0) return 'is empty: name the variables to check';
      const bad = names.filter((n) => !isText(value[n]));
      return bad.length ? `${bad.map((n) => `.${n}`).join(', ')} ${text}` : null;
    }
    case 'attachments':
      return attachmentsProblem(value);
    case 'link':
      return linkProblem(value);
    case 'code':
      return value === true || isText(value)
        ? null
        : `must be true (any code), a string, a RegExp or an asymmetric matcher (got ${describe(value)})`;
    case 'codePattern':
      return value instanceof RegExp
        ? null
        : `must be a RegExp, e.g. /\\b[A-Z]{3}-\\d{3}\\b/ (got ${describe(value)})`;
    default:
      return isText(value) ? null : `${text} (got ${describe(value)})`;
  }
}

/** Why a link criterion (`SandboxLinkMatch`) cannot be checked, or null. */
function linkProblem(value: unknown): string | null {
  if (isText(value)) return null;
  if (!isPlainObject(value))
    return `must be a string, a RegExp, an asymmetric matcher or { url, text } (got ${describe(value)})`;
  const names = Object.keys(value);
  const unknown = names.filter((n) => !LINK_KEYS.includes(n));
  if (unknown.length)
    return `has unknown ${unknown.map((k) => JSON.stringify(k)).join(', ')} (accepted: ${LINK_KEYS.join(', ')})`;
  if (names.length === 0) return 'is empty: give url or text';
  for (const n of names) {
    if (value[n] === undefined) return `.${n} is undefined: leave it out, or give the value to check`;
    if (!isText(value[n]))
      return `.${n} must be a string, a RegExp or an asymmetric matcher (got ${describe(value[n])})`;
  }
  return null;
}

/**
 * Checks a link criterion given apart from the message's criteria (`toHaveSentLink`'s first argument,
 * `toContainLink`'s, `linkIn`'s): the rules of the `link` criterion, its object read as `checkMatch` reads
 * one. Throws a `TypeError` naming the problem.
 */
export function checkLinkMatch(link: unknown, where: string): SandboxLinkMatch {
  const value = plainCriterion('link', link);
  const problem = value === undefined ? 'is undefined: leave it out for any link' : linkProblem(value);
  if (problem) throw new TypeError(`${where}: the link ${problem}`);
  return value as SandboxLinkMatch;
}

function attachmentsProblem(value: unknown): string | null {
  if (isAsymmetric(value)) return null;
  if (!Array.isArray(value))
    return `must be a list of { filename?, contentType?, content? } or an asymmetric matcher (got ${describe(value)})`;
  if (value.length === 0) return 'is empty: list the attachments to check';
  for (const [i, entry] of value.entries()) {
    if (isAsymmetric(entry)) continue;
    if (!isPlainObject(entry))
      return `[${i}] must be an object such as { filename } (got ${describe(entry)})`;
    const names = Object.keys(entry);
    const unknown = names.filter((n) => !ATTACHMENT_KEYS.includes(n));
    if (unknown.length) {
      return `[${i}] has unknown ${unknown.map((k) => JSON.stringify(k)).join(', ')} (accepted: ${ATTACHMENT_KEYS.join(', ')})`;
    }
    if (names.length === 0) return `[${i}] is empty: name what to check`;
    for (const n of names) {
      const v = entry[n];
      if (n === 'content' ? typeof v !== 'string' && !Buffer.isBuffer(v) && !isAsymmetric(v) : !isText(v)) {
        return `[${i}].${n} cannot be checked (got ${describe(v)})`;
      }
    }
  }
  return null;
}

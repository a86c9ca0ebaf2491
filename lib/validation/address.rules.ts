import type { EmailValidationIssue } from '../errors/email-validation.error.js';
import {
  MAX_ADDRESS_LENGTH,
  MAX_DOMAIN_LABEL_LENGTH,
  MAX_LOCAL_PART_LENGTH,
  MAX_RECIPIENTS,
  messages,
} from './validation.constants.js';

type Issues = EmailValidationIssue[];

/** Outcome of {@link checkAddress}: one of the `ADDRESS_*` codes. */
export type AddressCheck = 0 | 1 | 2 | 3 | 4;
/** The string is an acceptable address. */
export const ADDRESS_OK = 0;
/** The string is empty. */
export const ADDRESS_EMPTY = 1;
/** The string holds a CR or LF (a header-injection attempt or a copy-paste accident). */
export const ADDRESS_CRLF = 2;
/** The string is not an address in either accepted form. */
export const ADDRESS_INVALID = 3;
/**
 * The string holds an invisible or direction-changing code point: a control (Cc), format (Cf, such as
 * the bidirectional overrides U+202A-U+202E and U+2066-U+2069, zero-width joiners, soft hyphen),
 * private-use (Co) or line/paragraph separator, or a lone surrogate. These are how a display name
 * passes itself off as another address.
 */
export const ADDRESS_HIDDEN = 4;

const HIDDEN = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Zl}\p{Zp}]/u; // Cs: a lone surrogate, in u mode

/** True when a non-ASCII part of `s` holds a code point that {@link ADDRESS_HIDDEN} refuses. */
function hasHiddenCodePoint(s: string): boolean {
  let ascii = true;
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) >= 0x80) {
      ascii = false;
      break;
    }
  }
  if (ascii) return false; // ASCII controls are refused by the character tables below
  return HIDDEN.test(s);
}

/**
 * Added by the passes below to their code when the text they read holds a character past ASCII: only
 * then can it hold a hidden code point, so only then does `checkAddress` ask the (regular-expression)
 * hidden check. The address is read once, not once for ASCII and once for its form.
 */
const WIDE = 8;

const ATEXT = 1; // allowed in a local part (besides dots)
const LABEL = 2; // allowed in a domain label
const DIGIT = 4;
const NAME = 8; // allowed in an unquoted display name

const CHARS = new Uint8Array(128);
for (let c = 0x20; c < 0x7f; c++) CHARS[c] = NAME;
for (const ch of '"<>@,;:\\()[]') CHARS[ch.charCodeAt(0)] = 0;
for (let c = 48; c <= 57; c++) CHARS[c] |= ATEXT | LABEL | DIGIT;
for (let c = 65; c <= 90; c++) CHARS[c] |= ATEXT | LABEL;
for (let c = 97; c <= 122; c++) CHARS[c] |= ATEXT | LABEL;
for (const ch of "!#$%&'*+/=?^_`{|}~") CHARS[ch.charCodeAt(0)] |= ATEXT;
CHARS[45] |= ATEXT | LABEL; // '-'

/** Non-ASCII blanks and line separators, refused inside an address. */
function hasLineBreak(s: string): boolean {
  return s.indexOf('\n') !== -1 || s.indexOf('\r') !== -1;
}

function isUnicodeBlank(c: number): boolean {
  return (
    c === 0x85 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200b) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/** Checks `s[start, end)` as `local@domain.tld`, in one pass (`WIDE` added past ASCII, unless CR/LF). */
function checkAddrSpec(s: string, start: number, end: number): number {
  let seen = 0; // every character read, OR-ed: past 0x7f when one is past ASCII
  let at = -1;
  let prevDot = true;
  let bad = end === start || end - start > MAX_ADDRESS_LENGTH;
  let labelStart = 0;
  let labelHasLetter = false;
  let dots = 0;
  for (let i = start; i < end; i++) {
    const c = s.charCodeAt(i);
    seen |= c;
    if (c === 10 || c === 13) return ADDRESS_CRLF;
    if (bad) continue; // keep looking for CR/LF, which has its own message
    if (at < 0) {
      if (c === 64) {
        if (prevDot || i - start > MAX_LOCAL_PART_LENGTH) bad = true;
        at = i;
        labelStart = i + 1;
      } else if (c === 46) {
        if (prevDot) bad = true;
        prevDot = true;
      } else {
        prevDot = false;
        if (c < 128 ? (CHARS[c] & ATEXT) === 0 : isUnicodeBlank(c)) bad = true;
      }
    } else if (c === 46) {
      const size = i - labelStart;
      if (size === 0 || size > MAX_DOMAIN_LABEL_LENGTH || s.charCodeAt(i - 1) === 45) bad = true;
      labelStart = i + 1;
      labelHasLetter = false;
      dots++;
    } else if (c < 128) {
      const flags = CHARS[c];
      if ((flags & LABEL) === 0 || (c === 45 && i === labelStart)) bad = true;
      if ((flags & DIGIT) === 0) labelHasLetter = true;
    } else {
      if (isUnicodeBlank(c)) bad = true;
      labelHasLetter = true;
    }
  }
  const wide = seen > 0x7f ? WIDE : 0;
  if (bad || at < 0 || dots === 0) return ADDRESS_INVALID | wide;
  const last = end - labelStart;
  if (last === 0 || last > MAX_DOMAIN_LABEL_LENGTH || s.charCodeAt(end - 1) === 45 || !labelHasLetter) {
    return ADDRESS_INVALID | wide;
  }
  return ADDRESS_OK | wide;
}

function isNameControl(c: number): boolean {
  return c < 0x20 || c === 0x7f || c === 0x85 || c === 0x2028 || c === 0x2029;
}

/**
 * Checks the display name in `s[start, end)`: empty, a plain phrase, or a quoted string (`WIDE` added
 * past ASCII, unless CR/LF).
 */
function checkDisplayName(s: string, start: number, end: number): number {
  let a = start;
  let b = end;
  while (a < b && s.charCodeAt(a) === 32) a++;
  while (b > a && s.charCodeAt(b - 1) === 32) b--;
  if (a === b) return ADDRESS_OK;
  let bad = false;
  // The loops below read every character but a quoted name's ends: those are read here.
  let seen = s.charCodeAt(a) | s.charCodeAt(b - 1);
  if (s.charCodeAt(a) === 34) {
    if (b - a < 2 || s.charCodeAt(b - 1) !== 34) bad = true;
    for (let i = a + 1; i < b - 1; i++) {
      let c = s.charCodeAt(i);
      if (c === 92) {
        i++;
        if (i >= b - 1) bad = true;
        c = s.charCodeAt(i);
      } else if (c === 34) bad = true;
      seen |= c;
      if (c === 10 || c === 13) return ADDRESS_CRLF;
      if (isNameControl(c)) bad = true;
    }
  } else {
    for (let i = a; i < b; i++) {
      const c = s.charCodeAt(i);
      seen |= c;
      if (c === 10 || c === 13) return ADDRESS_CRLF;
      if (c < 128 ? (CHARS[c] & NAME) === 0 : isNameControl(c)) bad = true;
    }
  }
  return (bad ? ADDRESS_INVALID : ADDRESS_OK) | (seen > 0x7f ? WIDE : 0);
}

/**
 * Checks one sender or recipient. Accepts a bare `local@domain.tld` or `Display Name <local@domain.tld>`
 * (the name may be quoted: `"Doe, Jane" <jane@example.com>`). The domain needs at least one dot and a
 * top-level label that is not all digits; IP literals, quoted local parts and comments are refused.
 * Any CR or LF anywhere gives {@link ADDRESS_CRLF}; a control, format or private-use code point or a
 * lone surrogate gives {@link ADDRESS_HIDDEN} (both before any fault of form). One pass over the text;
 * the hidden check's regular expression runs only on a text that holds a character past ASCII. No
 * allocation.
 *
 * @example
 * checkAddress('Ada <ada@example.com>') === ADDRESS_OK
 * checkAddress('ada@localhost') === ADDRESS_INVALID
 */
export function checkAddress(s: string): AddressCheck {
  const len = s.length;
  if (len === 0) return ADDRESS_EMPTY;
  let form: number; // an ADDRESS_* code, with WIDE when the text holds a character past ASCII
  if (s.charCodeAt(len - 1) !== 62) form = checkAddrSpec(s, 0, len);
  else {
    const lt = s.lastIndexOf('<');
    // Neither form: nothing was read, so the hidden check looks at the whole text itself.
    if (lt < 0) return hasHiddenCodePoint(s) || hasLineBreak(s) ? hiddenOrLineBreak(s) : ADDRESS_INVALID;
    const name = checkDisplayName(s, 0, lt);
    if (name === ADDRESS_CRLF) return ADDRESS_CRLF;
    const addr = checkAddrSpec(s, lt + 1, len - 1); // `<` and `>` around it are ASCII
    if (addr === ADDRESS_CRLF) return ADDRESS_CRLF;
    form = ((addr & ~WIDE) === ADDRESS_OK ? name : addr) | ((name | addr) & WIDE);
  }
  if (form === ADDRESS_CRLF) return ADDRESS_CRLF;
  if ((form & WIDE) !== 0 && hasHiddenCodePoint(s)) return hiddenOrLineBreak(s);
  return (form & ~WIDE) as AddressCheck;
}

/** What a text holding a hidden code point (or, for the text of neither form, a line break) gives. */
function hiddenOrLineBreak(s: string): AddressCheck {
  return hasLineBreak(s) ? ADDRESS_CRLF : ADDRESS_HIDDEN;
}

function checkOneAddress(value: unknown, prefix: string, field: string, index: number, issues: Issues): void {
  const code = typeof value === 'string' ? checkAddress(value) : -1;
  if (code === ADDRESS_OK) return;
  const path = index < 0 ? prefix + field : `${prefix}${field}[${index}]`;
  const message =
    code === -1
      ? messages.addressType(path)
      : code === ADDRESS_CRLF
        ? messages.crlf(path)
        : code === ADDRESS_EMPTY
          ? messages.addressEmpty(path)
          : code === ADDRESS_HIDDEN
            ? messages.addressHidden(path)
            : messages.addressInvalid(path);
  issues.push({ path, message });
}

/** `from`: required, one address (bare or `Name <address>`), no CR/LF. */
export function checkFrom(value: unknown, prefix: string, issues: Issues): void {
  if (value === undefined)
    issues.push({ path: `${prefix}from`, message: messages.fromRequired(`${prefix}from`) });
  else checkOneAddress(value, prefix, 'from', -1, issues);
}

function toShapeIssue(value: unknown, prefix: string, issues: Issues): void {
  const path = `${prefix}to`;
  const message =
    value === undefined
      ? messages.required(path)
      : !Array.isArray(value)
        ? messages.toType(path)
        : value.length === 0
          ? messages.toEmpty(path)
          : messages.toTooMany(path, value.length);
  issues.push({ path, message });
}

/** `to`: required array of 1 to 50 addresses; every bad entry gets its own issue (`to[7]`). */
export function checkTo(value: unknown, prefix: string, issues: Issues): void {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_RECIPIENTS) {
    toShapeIssue(value, prefix, issues);
  }
  if (!Array.isArray(value)) return;
  for (let i = 0; i < value.length; i++) checkOneAddress(value[i], prefix, 'to', i, issues);
}

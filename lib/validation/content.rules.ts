import type { EmailValidationIssue } from '../errors/email-validation.error.js';
import {
  messages,
  SINGLE_SEND_FIELDS,
  UNSUPPORTED_ATTACHMENT_FIELD_NAMES,
  UNSUPPORTED_EMAIL_FIELD_NAMES,
} from './validation.constants.js';

type Issues = EmailValidationIssue[];
const toTag = Object.prototype.toString;
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** True for a plain object or class instance; false for null, arrays, Dates, Maps and primitives. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && toTag.call(value) === '[object Object]';
}

/** True for a `Date` object, from this realm or another. */
export function isDate(value: unknown): value is Date {
  return typeof value === 'object' && value !== null && toTag.call(value) === '[object Date]';
}

/** True when `s` holds a CR or LF anywhere. Two native scans, no regular expression. */
export function hasLineBreak(s: string): boolean {
  return s.indexOf('\n') !== -1 || s.indexOf('\r') !== -1;
}

/** `prefix + key`, or `prefix["odd key"]` when the key is not an identifier. */
export function keyPath(prefix: string, key: string): string {
  return IDENTIFIER.test(key) ? `${prefix}.${key}` : `${prefix}[${JSON.stringify(key)}]`;
}

/**
 * `subject` when given: a non-empty string without CR/LF, lone surrogate or bidirectional embedding,
 * override or isolate (U+202A-U+202E, U+2066-U+2069). Whether it must be there is a content rule.
 */
export function checkSubject(value: unknown, prefix: string, issues: Issues): void {
  if (value === undefined || value === null) return;
  const path = `${prefix}subject`;
  if (typeof value !== 'string' || value.length === 0) {
    issues.push({ path, message: messages.subjectType(path) });
  } else if (hasLineBreak(value)) {
    issues.push({ path, message: messages.crlf(path) });
  } else if (hasLoneSurrogate(value)) {
    issues.push({ path, message: messages.loneSurrogate(path) });
  } else if (hasBidiControl(value, false)) {
    issues.push({ path, message: messages.bidiSubject(path) });
  }
}

/**
 * `html` / `text`: a string or null, without a lone surrogate (one native scan). Line breaks and
 * direction marks belong in bodies.
 */
export function checkBody(value: unknown, prefix: string, field: 'html' | 'text', issues: Issues): void {
  if (value === undefined || value === null) return;
  if (typeof value !== 'string')
    issues.push({ path: prefix + field, message: messages.bodyType(prefix + field) });
  else if (hasLoneSurrogate(value))
    issues.push({ path: prefix + field, message: messages.loneSurrogate(prefix + field) });
}

/** `templateId`: a positive safe integer or null. */
export function checkTemplateId(value: unknown, prefix: string, issues: Issues): void {
  if (value === undefined || value === null) return;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 1) return;
  issues.push({ path: `${prefix}templateId`, message: messages.templateIdType(`${prefix}templateId`) });
}

/** `variables`: null or a plain object whose every value is a string (`variables.name` names a bad one). */
export function checkVariables(value: unknown, prefix: string, issues: Issues): void {
  if (value === undefined || value === null) return;
  const path = `${prefix}variables`;
  if (!isRecord(value)) return void issues.push({ path, message: messages.variablesType(path) });
  for (const key of Object.keys(value)) {
    const v = value[key];
    const at = keyPath(path, key);
    if (typeof v !== 'string') issues.push({ path: at, message: messages.variableValue(at) });
    else if (hasLoneSurrogate(v) || hasLoneSurrogate(key))
      issues.push({ path: at, message: messages.loneSurrogate(at) });
  }
}

/** `trackOpens` / `trackClicks`: a boolean or null. */
export function checkTracking(value: unknown, prefix: string, field: string, issues: Issues): void {
  if (value === undefined || value === null || typeof value === 'boolean') return;
  issues.push({ path: prefix + field, message: messages.trackingType(prefix + field) });
}

const given = (v: unknown): boolean => v !== undefined && v !== null;
const nonEmpty = (v: unknown): boolean => typeof v === 'string' && v.length > 0;

/**
 * The contract's content rules, read from the whole email:
 * - inline (no `templateId`): `subject` plus a non-empty `html` and/or `text`; no `variables`;
 * - template (`templateId` set): `variables` required (may be `{}`); `subject`, `html`, `text` absent
 *   (`null` counts as absent for the nullable `html` and `text`, not for `subject`, which is never nullable).
 * Issues land on the field to change (`subject`, `html`, `variables`), after `prefix`.
 */
export function checkContentMode(
  email: Record<string, unknown>,
  prefix: string,
  issues: EmailValidationIssue[],
): void {
  if (given(email.templateId)) {
    if (email.subject !== undefined) push(issues, prefix + 'subject', messages.notWithTemplate);
    if (given(email.html)) push(issues, prefix + 'html', messages.notWithTemplate);
    if (given(email.text)) push(issues, prefix + 'text', messages.notWithTemplate);
    if (!given(email.variables)) push(issues, prefix + 'variables', messages.variablesRequired);
    return;
  }
  if (!given(email.subject)) push(issues, prefix + 'subject', messages.subjectMissing);
  if (!nonEmpty(email.html) && !nonEmpty(email.text)) push(issues, prefix + 'html', messages.bodyMissing);
  if (given(email.variables)) push(issues, prefix + 'variables', messages.variablesWithoutTemplate);
}

function push(issues: EmailValidationIssue[], path: string, message: (p: string) => string): void {
  issues.push({ path, message: message(path) });
}

/**
 * How the client counts and which code points it refuses in the strings it sends. One rule for every
 * length of the contract ("1 to 255 characters", "minimum length 1"): **UTF-16 code units** (JavaScript's
 * `string.length`). It is the strictest of the usual counts (an emoji is 2 units, 1 code point, 1
 * grapheme), so a string that passes can never be refused by a server counting any of them.
 */

/** Length of `s` as the contract's limits are checked: UTF-16 code units. */
export function textLength(s: string): number {
  return s.length;
}

const HAS_WELL_FORMED = typeof (String.prototype as { isWellFormed?: unknown }).isWellFormed === 'function';

/**
 * True when `s` holds a lone surrogate (a high surrogate U+D800-U+DBFF not followed by a low one, or a
 * low surrogate U+DC00-U+DFFF not preceded by a high one): such a string has no UTF-8 form, so what the
 * server would store is not what was validated. One native scan where the runtime has `isWellFormed`.
 */
export function hasLoneSurrogate(s: string): boolean {
  if (HAS_WELL_FORMED) return !(s as unknown as { isWellFormed(): boolean }).isWellFormed();
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    if (c >= 0xdc00) return true;
    const next = s.charCodeAt(i + 1);
    if (!(next >= 0xdc00 && next <= 0xdfff)) return true;
    i++;
  }
  return false;
}

/**
 * True when `s` holds an explicit bidirectional formatting character: the embeddings and overrides
 * U+202A-U+202E and the isolates U+2066-U+2069. With `marks`, the implicit marks U+200E, U+200F and
 * U+061C too. An override makes `invoice\u202Efdp.exe` read as `invoiceexe.pdf`.
 */
export function hasBidiControl(s: string, marks: boolean): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x61c) continue;
    if ((c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069)) return true;
    if (marks && (c === 0x200e || c === 0x200f || c === 0x61c)) return true;
  }
  return false;
}

function table(entries: Record<string, string>): Readonly<Record<string, string>> {
  return Object.freeze(Object.assign(Object.create(null) as Record<string, string>, entries));
}

/** See `UNSUPPORTED_EMAIL_FIELD_NAMES` in the field table, as a frozen lookup table. */
export const UNSUPPORTED_EMAIL_FIELDS: Readonly<Record<string, string>> = table(
  UNSUPPORTED_EMAIL_FIELD_NAMES,
);

/** Attachment fields the service cannot honour: files by location, and inline (CID) attachments. */
export const UNSUPPORTED_ATTACHMENT_FIELDS: Readonly<Record<string, string>> = table(
  UNSUPPORTED_ATTACHMENT_FIELD_NAMES,
);

/** Fields of a single send that a batch item may not carry, with what they stand for. */
export const NOT_IN_BATCH_FIELDS: Readonly<Record<string, string>> = table(SINGLE_SEND_FIELDS);

/** Which object a field was found on; decides the message and the list of unsupported names. */
export type FieldOwner = 'email' | 'batch item' | 'attachment';

/**
 * Refuses a field that is not part of the contract: unsupported ones by name and reason, batch-only
 * refusals with the batch reason, anything else as unknown. A field whose value is `undefined` is
 * ignored, as JSON would drop it anyway.
 */
export function checkExtraField(
  key: string,
  value: unknown,
  path: string,
  owner: FieldOwner,
  issues: EmailValidationIssue[],
): void {
  if (value === undefined) return;
  const table = owner === 'attachment' ? UNSUPPORTED_ATTACHMENT_FIELDS : UNSUPPORTED_EMAIL_FIELDS;
  const what = table[key];
  if (what !== undefined) {
    issues.push({ path, message: messages.unsupported(path, what) });
  } else if (owner === 'batch item' && NOT_IN_BATCH_FIELDS[key] !== undefined) {
    issues.push({ path, message: messages.notInBatch(path, NOT_IN_BATCH_FIELDS[key]) });
  } else {
    issues.push({
      path,
      message: messages.unknownField(path, owner === 'attachment' ? 'an attachment' : 'an email'),
    });
  }
}

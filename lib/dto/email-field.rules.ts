import type { EmailValidationIssue } from '../errors/email-validation.error.js';
import {
  ADDRESS_CRLF,
  ADDRESS_HIDDEN,
  ADDRESS_EMPTY,
  ADDRESS_OK,
  checkAddress,
} from './email-address.rules.js';
import { MAX_RECIPIENTS } from './email-rules.constants.js';
import { messages } from './email-rules.messages.js';
import { hasBidiControl, hasLoneSurrogate } from './unicode-text.rules.js';

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

/**
 * The rules of a single send (`EmailService.send`, `POST /emails`): the whole email (`checkEmail`, which
 * batch items share) and the send's options (idempotency key, `reconcile`).
 */
import type { EmailValidationIssue } from '../errors/email-validation.error.js';
import type { SendOptions } from '../interfaces/call-options.interface.js';
import type { EmailInput } from '../interfaces/email-input.interface.js';
import type { ResolvedEmailOptions } from '../interfaces/email-module-options.interface.js';
import { checkFrom, checkTo } from './address.rules.js';
import { checkAttachmentList } from './attachment.rules.js';
import { callOf, describeValue, done, withDefaultFrom, type CheckedCall } from './call-options.rules.js';
import {
  checkBody,
  checkContentMode,
  checkExtraField,
  checkSubject,
  checkTemplateId,
  checkTracking,
  checkVariables,
  isRecord,
} from './content.rules.js';
import { generateIdempotencyKey, isValidIdempotencyKey } from './idempotency-key.helpers.js';
import { snapshotInto } from './input-snapshot.helpers.js';
import { checkScheduledAt } from './schedule.rules.js';
import { CONTENT_FIELDS, messages, SINGLE_SEND_FIELDS } from './validation.constants.js';

/**
 * Options of {@link validateEmailInput}.
 */
export interface ValidateOptions {
  /** The clock `scheduledAt` is measured against. @default new Date() */
  now?: Date;
}

const CONTENT: ReadonlySet<string> = new Set(CONTENT_FIELDS);

/** The options of a send given none (read only). */
const NO_OPTIONS: SendOptions = Object.freeze({});

/** Fields of every email that are checked by name; any other key is reported. */
function isContentField(key: string): boolean {
  return CONTENT.has(key);
}

/** Fields only a single send may carry. */
function isSingleSendField(key: string): boolean {
  return Object.hasOwn(SINGLE_SEND_FIELDS, key);
}

/** One email; `prefix` is `''` for a single send and `[i].` for batch item `i`. */
export function checkEmail(
  email: unknown,
  prefix: string,
  single: boolean,
  nowMs: number,
  issues: EmailValidationIssue[],
): void {
  if (!isRecord(email)) {
    const path = prefix.slice(0, -1); // '[3].' -> '[3]'
    issues.push({ path, message: messages.notEmail(path) });
    return;
  }
  for (const key in email) {
    if (isContentField(key) || (single && isSingleSendField(key))) continue;
    checkExtraField(key, email[key], prefix + key, single ? 'email' : 'batch item', issues);
  }
  checkFrom(email.from, prefix, issues);
  checkTo(email.to, prefix, issues);
  checkSubject(email.subject, prefix, issues);
  checkBody(email.html, prefix, 'html', issues);
  checkBody(email.text, prefix, 'text', issues);
  checkTemplateId(email.templateId, prefix, issues);
  checkVariables(email.variables, prefix, issues);
  checkTracking(email.trackOpens, prefix, 'trackOpens', issues);
  checkTracking(email.trackClicks, prefix, 'trackClicks', issues);
  if (single) {
    checkScheduledAt(email.scheduledAt, prefix, nowMs, issues);
    checkAttachmentList(email.attachments, prefix, true, issues);
  }
  checkContentMode(email, prefix, issues);
}

/**
 * Checks a single send (`POST /emails`) against every rule of the contract, without a request, and returns
 * all problems found (empty when the input is fine). Unknown and unsupported fields are problems too.
 * One pass, no regular expression on the hot path; bodies get only a native lone-surrogate scan.
 *
 * @example
 * const issues = validateEmailInput({ from: 'a@example.com', to: ['b@example.com'], subject: 'Hi', text: 'Yo' });
 * // [] ; with `cc: [...]` added: [{ path: 'cc', message: 'cc is not supported: ...' }]
 */
export function validateEmailInput(input: unknown, options: ValidateOptions = {}): EmailValidationIssue[] {
  const issues: EmailValidationIssue[] = [];
  const nowMs = options.now === undefined ? Date.now() : options.now.getTime();
  checkEmail(input, '', true, nowMs, issues);
  return issues;
}

/** A checked send: the snapshot that was validated and the exact bytes to send. */
export interface CheckedSend extends CheckedCall {
  input: EmailInput;
  body: string;
  idempotencyKey: string | undefined;
  /** The key was generated for this call (the caller gave none). */
  freshKey: boolean;
  /** Whether this call looks its message up when an attempt may have created it. */
  reconcile: boolean;
}

function keyOf(
  options: SendOptions,
  resolved: ResolvedEmailOptions,
  issues: EmailValidationIssue[],
): string | undefined {
  const given = options.idempotencyKey;
  if (given === undefined) return resolved.idempotency === 'auto' ? generateIdempotencyKey() : undefined;
  if (!isValidIdempotencyKey(given)) {
    issues.push({
      path: 'idempotencyKey',
      message: 'must be 16 to 128 characters of letters, digits, underscore, colon or hyphen',
    });
  }
  return given;
}

/**
 * Checks a single send and its options in one go: takes one plain snapshot of `input` (see
 * `snapshotInput`), applies `defaultFrom`, validates the snapshot and serializes it. The returned `body`
 * is the exact text to send. Throws one `EmailValidationError` listing every problem.
 */
export function checkSend(
  input: unknown,
  maybeOptions: SendOptions | null | undefined,
  resolved: ResolvedEmailOptions,
): CheckedSend {
  const options = maybeOptions ?? NO_OPTIONS;
  // One list of issues for the whole check, in the order: key, reconcile, snapshot, rules, call options.
  const issues: EmailValidationIssue[] = [];
  const idempotencyKey = keyOf(options, resolved, issues);
  const reconcile = options.reconcile ?? resolved.reconcile;
  if (typeof reconcile !== 'boolean') {
    issues.push({ path: 'reconcile', message: `must be true or false (got ${describeValue(reconcile)})` });
  }
  const before = issues.length;
  const value = withDefaultFrom(snapshotInto(input, issues), resolved.defaultFrom);
  // One clock reading: what `scheduledAt` is measured against is when the call's deadline starts.
  const now = Date.now();
  if (issues.length === before) checkEmail(value, '', true, now, issues); // the rules of validateEmailInput
  const call = callOf(options, resolved, issues, now);
  done(issues);
  // Fields spelled out: an object spread here cost more than the whole validation (V8's clone path).
  const body = JSON.stringify(value);
  return {
    ctx: call.ctx,
    maxRetries: call.maxRetries,
    input: value as EmailInput,
    body,
    idempotencyKey,
    freshKey: idempotencyKey !== undefined && options.idempotencyKey === undefined,
    reconcile,
  };
}

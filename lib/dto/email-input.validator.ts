import type { EmailValidationIssue } from '../errors/email-validation.error.js';
import { checkAttachmentList } from './attachment.rules.js';
import { checkContentMode } from './content-mode.rules.js';
import {
  checkBody,
  checkFrom,
  checkSubject,
  checkTemplateId,
  checkTo,
  checkTracking,
  checkVariables,
  isRecord,
} from './email-field.rules.js';
import { CONTENT_FIELDS, SINGLE_SEND_FIELDS } from './email-fields.constants.js';
import { MAX_BATCH_ITEMS, MIN_BATCH_ITEMS } from './email-rules.constants.js';
import { messages } from './email-rules.messages.js';
import { checkScheduledAt } from './scheduled-at.rules.js';
import { checkExtraField } from './unsupported-fields.rules.js';

/**
 * Options of {@link validateEmailInput}.
 * @publicApi
 */
export interface ValidateOptions {
  /** The clock `scheduledAt` is measured against. @default new Date() */
  now?: Date;
}

const CONTENT: ReadonlySet<string> = new Set(CONTENT_FIELDS);

/** Fields of every email that are checked by name; any other key is reported. */
function isContentField(key: string): boolean {
  return CONTENT.has(key);
}

/** Fields only a single send may carry. */
function isSingleSendField(key: string): boolean {
  return Object.hasOwn(SINGLE_SEND_FIELDS, key);
}

/** One email; `prefix` is `''` for a single send and `[i].` for batch item `i`. */
function checkEmail(
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
 * @publicApi
 */
export function validateEmailInput(input: unknown, options: ValidateOptions = {}): EmailValidationIssue[] {
  const issues: EmailValidationIssue[] = [];
  const nowMs = options.now === undefined ? Date.now() : options.now.getTime();
  checkEmail(input, '', true, nowMs, issues);
  return issues;
}

/**
 * Checks a batch (`POST /emails/batch`): an array of 1 to 100 emails, each checked like a single send but
 * refusing `scheduledAt` and `attachments`. Paths start with the item index: `[3].to[7]`.
 *
 * @example
 * validateBatchItems([]) // [{ path: '', message: 'the batch is empty; it must hold at least 1 email' }]
 * @publicApi
 */
export function validateBatchItems(items: unknown): EmailValidationIssue[] {
  const issues: EmailValidationIssue[] = [];
  if (!Array.isArray(items)) {
    issues.push({ path: '', message: messages.notBatch() });
    return issues;
  }
  if (items.length < MIN_BATCH_ITEMS || items.length > MAX_BATCH_ITEMS) {
    issues.push({ path: '', message: messages.batchSize(items.length) });
  }
  for (let i = 0; i < items.length; i++) checkEmail(items[i], `[${i}].`, false, 0, issues);
  return issues;
}

/**
 * Checks the items of `EmailService.sendMany`: an array of any length (at least one), each item
 * checked like a batch item. Paths start with the item's index in the whole list: `[3].to[0]`.
 */
export function validateManyItems(items: unknown): EmailValidationIssue[] {
  if (!Array.isArray(items)) return [{ path: '', message: 'items must be an array of emails' }];
  const issues: EmailValidationIssue[] = [];
  if (items.length === 0) issues.push({ path: '', message: 'items is empty; give at least 1 email' });
  for (let i = 0; i < items.length; i++) checkEmail(items[i], `[${i}].`, false, 0, issues);
  return issues;
}

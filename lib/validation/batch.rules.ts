/**
 * The rules of a batch (`sendBatch`, `POST /emails/batch`) and of `sendMany`'s list: every item checked
 * like a single send (`checkEmail`) but without `scheduledAt` and `attachments`.
 */
import type { EmailValidationIssue } from '../errors/email-validation.error.js';
import type { CallOptions } from '../interfaces/call-options.interface.js';
import type { BatchEmailItem } from '../interfaces/email-input.interface.js';
import type { ResolvedEmailOptions } from '../interfaces/email-module-options.interface.js';
import type { SendManyOptions, SendManyProgress } from '../interfaces/send-many.interface.js';
import { callOf, done, withDefaultFrom, type CheckedCall } from './call-options.rules.js';
import { snapshotInput } from './input-snapshot.helpers.js';
import { checkEmail } from './send.rules.js';
import { MAX_BATCH_ITEMS, messages, MIN_BATCH_ITEMS } from './validation.constants.js';

/** A checked batch: the validated snapshot of its items and the exact bytes to send. */
export interface CheckedBatch extends CheckedCall {
  items: BatchEmailItem[];
  body: string;
  /** The total of the items' `to` addresses (what a recipient quota counts). */
  recipients: number;
}

/**
 * Checks a batch (`POST /emails/batch`): an array of 1 to 100 emails, each checked like a single send but
 * refusing `scheduledAt` and `attachments`. Paths start with the item index: `[3].to[7]`.
 *
 * @example
 * validateBatchItems([]) // [{ path: '', message: 'the batch is empty; it must hold at least 1 email' }]
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

/** Checks a batch and its options like {@link checkSend}: one snapshot, validated, serialized once. */
export function checkBatch(
  items: unknown,
  maybeOptions: CallOptions | null | undefined,
  resolved: ResolvedEmailOptions,
): CheckedBatch {
  const options = maybeOptions ?? {};
  const snap = snapshotInput(items);
  const issues = [...snap.issues];
  const value = snap.value;
  if (Array.isArray(value)) for (const item of value) withDefaultFrom(item, resolved.defaultFrom);
  if (snap.issues.length === 0) issues.push(...validateBatchItems(value));
  const call = callOf(options, resolved, issues);
  done(issues);
  const body = JSON.stringify(value);
  const checked = value as BatchEmailItem[];
  let recipients = 0;
  for (const item of checked) recipients += item.to.length;
  return { ctx: call.ctx, maxRetries: call.maxRetries, items: checked, body, recipients };
}

/** Checked `sendMany` input: the snapshot of its items and the options each batch is sent with. */
export interface CheckedMany {
  items: BatchEmailItem[];
  batchOptions: CallOptions;
  onBatch?: (progress: SendManyProgress) => void;
}

/**
 * Checks `sendMany`: one snapshot of the whole list, `defaultFrom` applied, every item checked like a
 * batch item (paths by index in the whole list, `[3].to[0]`), and the options. One
 * `EmailValidationError` names every problem, before any request.
 */
export function checkMany(
  items: unknown,
  maybeOptions: SendManyOptions | null | undefined,
  resolved: ResolvedEmailOptions,
): CheckedMany {
  const options = maybeOptions ?? {};
  const snap = snapshotInput(items);
  const issues = [...snap.issues];
  const value = snap.value;
  if (Array.isArray(value)) for (const item of value) withDefaultFrom(item, resolved.defaultFrom);
  if (snap.issues.length === 0) issues.push(...validateManyItems(value));
  callOf(options, resolved, issues);
  const { onBatch, signal, timeoutMs, maxRetries, account } = options;
  if (onBatch !== undefined && typeof onBatch !== 'function') {
    issues.push({ path: 'onBatch', message: 'must be a function' });
  }
  done(issues);
  const batchOptions =
    account === undefined ? { signal, timeoutMs, maxRetries } : { signal, timeoutMs, maxRetries, account };
  return { items: value as BatchEmailItem[], batchOptions, onBatch };
}

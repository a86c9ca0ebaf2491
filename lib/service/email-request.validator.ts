import { generateIdempotencyKey, isValidIdempotencyKey } from '../delivery/idempotency-key.rules.js';
import { snapshotInput } from '../dto/email-input.snapshot.js';
import { validateBatchItems, validateEmailInput, validateManyItems } from '../dto/email-input.validator.js';
import { EmailValidationError, type EmailValidationIssue } from '../errors/email-validation.error.js';
import type { CallContext } from '../http/email-api.client.js';
import type {
  CallOptions,
  FindSentOptions,
  ListOptions,
  SendOptions,
} from '../interfaces/call-options.interface.js';
import type { BatchEmailItem, EmailInput } from '../interfaces/email-input.interface.js';
import type { ResolvedEmailOptions } from '../interfaces/email-module-options.interface.js';
import type { SendManyOptions, SendManyProgress } from '../interfaces/send-many.interface.js';

/** What every checked call carries: its deadline and signal, and how many retries it may make. */
export interface CheckedCall {
  ctx: CallContext;
  maxRetries: number;
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

/** A checked batch: the validated snapshot of its items and the exact bytes to send. */
export interface CheckedBatch extends CheckedCall {
  items: BatchEmailItem[];
  body: string;
  /** The total of the items' `to` addresses (what a recipient quota counts). */
  recipients: number;
}

/** A value as an error message shows it: strings quoted, so `"5"` and `5` differ. */
function describeValue(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

/** `value` (a snapshot of an input, ours to change) with `from` set when it has none. */
export function withDefaultFrom(value: unknown, from: string | undefined): unknown {
  if (from === undefined || typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const email = value as Record<string, unknown>;
  if (email.from === undefined) email.from = from; // the snapshot is ours: set in place
  return value;
}

function callOf(
  options: CallOptions,
  resolved: ResolvedEmailOptions,
  issues: EmailValidationIssue[],
): CheckedCall {
  const timeoutMs = options.timeoutMs ?? resolved.timeoutMs;
  if (!(typeof timeoutMs === 'number' && Number.isFinite(timeoutMs) && timeoutMs > 0)) {
    issues.push({
      path: 'timeoutMs',
      message: `must be a positive number (got ${describeValue(timeoutMs)})`,
    });
  }
  const { maxRetries } = options;
  if (maxRetries !== undefined && !(Number.isInteger(maxRetries) && maxRetries >= 0)) {
    issues.push({
      path: 'maxRetries',
      message: `must be an integer of 0 or more (got ${describeValue(maxRetries)})`,
    });
  }
  return {
    ctx: { deadline: Date.now() + timeoutMs, timeoutMs, signal: options.signal },
    maxRetries: maxRetries ?? resolved.maxRetries,
  };
}

/** Throws one `EmailValidationError` listing every problem found, if any. */
function done(issues: EmailValidationIssue[]): void {
  if (issues.length > 0) throw new EmailValidationError(issues);
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
  const options = maybeOptions ?? {};
  const issues: EmailValidationIssue[] = [];
  const idempotencyKey = keyOf(options, resolved, issues);
  const reconcile = options.reconcile ?? resolved.reconcile;
  if (typeof reconcile !== 'boolean') {
    issues.push({ path: 'reconcile', message: `must be true or false (got ${describeValue(reconcile)})` });
  }
  const snap = snapshotInput(input);
  issues.push(...snap.issues);
  const value = withDefaultFrom(snap.value, resolved.defaultFrom);
  if (snap.issues.length === 0) issues.push(...validateEmailInput(value));
  const call = callOf(options, resolved, issues);
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
  const { onBatch, signal, timeoutMs, maxRetries } = options;
  if (onBatch !== undefined && typeof onBatch !== 'function') {
    issues.push({ path: 'onBatch', message: 'must be a function' });
  }
  done(issues);
  return { items: value as BatchEmailItem[], batchOptions: { signal, timeoutMs, maxRetries }, onBatch };
}

/** Checks the options of a read with no other input (`list` also checks `limit`). */
export function checkList(
  maybeOptions: ListOptions | null | undefined,
  resolved: ResolvedEmailOptions,
): CheckedCall & { limit?: number } {
  const options = maybeOptions ?? {};
  const issues: EmailValidationIssue[] = [];
  const { limit } = options;
  if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1 && limit <= 100)) {
    issues.push({ path: 'limit', message: `must be an integer from 1 to 100 (got ${describeValue(limit)})` });
  }
  const call = callOf(options, resolved, issues);
  done(issues);
  return { ctx: call.ctx, maxRetries: call.maxRetries, limit };
}

/** Checks a record id and the call's options. */
export function checkRead(
  id: unknown,
  maybeOptions: CallOptions | null | undefined,
  resolved: ResolvedEmailOptions,
): CheckedCall {
  const issues: EmailValidationIssue[] = [];
  if (!Number.isSafeInteger(id))
    issues.push({ path: 'id', message: `must be an integer (got ${describeValue(id)})` });
  const call = callOf(maybeOptions ?? {}, resolved, issues);
  done(issues);
  return call;
}

/** What `findSent` needs of an input: a sender, recipients and, inline, a subject. */
function lookupIssues(input: unknown): EmailValidationIssue[] {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return [{ path: '', message: 'must be an email input object' }];
  }
  const email = input as Record<string, unknown>;
  const issues: EmailValidationIssue[] = [];
  if (typeof email.from !== 'string' || email.from.trim() === '') {
    issues.push({ path: 'from', message: 'is required (or set defaultFrom)' });
  }
  const to = email.to;
  if (!Array.isArray(to) || to.length === 0 || !to.every((t) => typeof t === 'string')) {
    issues.push({ path: 'to', message: 'must be a non-empty array of addresses' });
  }
  const templated = email.templateId !== undefined && email.templateId !== null;
  if (!templated && typeof email.subject !== 'string') {
    issues.push({ path: 'subject', message: 'is required unless templateId is set' });
  }
  return issues;
}

/** Checks a `findSent` look-up: a snapshot of the input with what matching needs, and `since`. */
export function checkLookup(
  input: unknown,
  options: FindSentOptions,
  resolved: ResolvedEmailOptions,
): CheckedCall & { input: BatchEmailItem; since: Date } {
  const issues: EmailValidationIssue[] = [];
  const since = (options as Partial<FindSentOptions> | undefined)?.since;
  if (!(since instanceof Date) || Number.isNaN(since.getTime())) {
    issues.push({ path: 'since', message: 'must be a valid Date' });
  }
  const snap = snapshotInput(input);
  issues.push(...snap.issues);
  const value = withDefaultFrom(snap.value, resolved.defaultFrom);
  if (snap.issues.length === 0) issues.push(...lookupIssues(value));
  const call = callOf(options ?? {}, resolved, issues);
  done(issues);
  return { ctx: call.ctx, maxRetries: call.maxRetries, input: value as BatchEmailItem, since: since as Date };
}

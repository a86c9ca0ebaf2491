/** The rules of the reads: `list` (its `limit`), `get` and `listEvents` (an id), `findSent` (a look-up). */
import type { EmailValidationIssue } from '../errors/email-validation.error.js';
import type { CallOptions, FindSentOptions, ListOptions } from '../interfaces/call-options.interface.js';
import type { BatchEmailItem } from '../interfaces/email-input.interface.js';
import type { ResolvedEmailOptions } from '../interfaces/email-module-options.interface.js';
import { callOf, describeValue, done, withDefaultFrom, type CheckedCall } from './call-options.rules.js';
import { snapshotInput } from './input-snapshot.helpers.js';

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

import type { EmailValidationIssue } from '../errors/email-validation.error.js';
import {
  SINGLE_SEND_FIELDS,
  UNSUPPORTED_ATTACHMENT_FIELD_NAMES,
  UNSUPPORTED_EMAIL_FIELD_NAMES,
} from './email-fields.constants.js';
import { messages } from './email-rules.messages.js';

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

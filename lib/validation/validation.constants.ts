/**
 * The service's limits, as named numbers. Every check in this folder reads them from here.
 */

/** Fewest recipients in `to`. @default 1 */
export const MIN_RECIPIENTS = 1;

/**
 * Most recipients in `to` (single sends and batch items alike). @default 50
 */
export const MAX_RECIPIENTS = 50;

/** Fewest emails in one batch. @default 1 */
export const MIN_BATCH_ITEMS = 1;

/**
 * Most emails in one batch. @default 100
 */
export const MAX_BATCH_ITEMS = 100;

/**
 * Most attachments on one single send. @default 5
 */
export const MAX_ATTACHMENTS = 5;

/**
 * Most decoded bytes of all attachments of one send together: 1.3 MiB, rounded down to whole bytes
 * (1.3 x 1,048,576 = 1,363,148.8).
 * @default 1363148
 */
export const MAX_ATTACHMENT_TOTAL_BYTES = Math.floor(1.3 * 1024 * 1024);

/**
 * Longest attachment filename, in characters counted as UTF-16 code units (JavaScript's `length`: an
 * emoji counts 2), the strictest usual count, so that no server counting otherwise refuses it. @default 255
 */
export const MAX_FILENAME_LENGTH = 255;

/**
 * How far ahead `scheduledAt` may be: 30 days of 24 hours, in milliseconds, no tolerance. @default 2592000000
 */
export const MAX_SCHEDULE_AHEAD_MS = 30 * 24 * 60 * 60 * 1000;

/** Longest address (`local@domain`), in UTF-16 units. @default 254 */
export const MAX_ADDRESS_LENGTH = 254;

/** Longest local part (before the `@`). @default 64 */
export const MAX_LOCAL_PART_LENGTH = 64;

/** Longest domain label (between dots). @default 63 */
export const MAX_DOMAIN_LABEL_LENGTH = 63;

/**
 * The one table of email fields. The validator's list of known fields, the unsupported-field tables and
 * the refused properties of the DTOs are all derived from it: add or remove a field here only.
 */

/** Fields every email (single send or batch item) may carry, each checked by its own rule. */
export const CONTENT_FIELDS = [
  'from',
  'to',
  'subject',
  'html',
  'text',
  'templateId',
  'variables',
  'trackOpens',
  'trackClicks',
] as const;

/** Fields only a single send may carry, with what they stand for (a batch item refuses them). */
export const SINGLE_SEND_FIELDS = {
  scheduledAt: 'scheduling (scheduledAt)',
  attachments: 'attachments',
} as const;

/**
 * Fields that mail libraries commonly offer on an email but the service cannot honour, with what they
 * stand for. Given one, validation fails and names it; it is never dropped silently.
 */
export const UNSUPPORTED_EMAIL_FIELD_NAMES = {
  cc: 'CC recipients',
  bcc: 'BCC recipients',
  replyTo: 'a Reply-To address',
  reply_to: 'a Reply-To address',
  'reply-to': 'a Reply-To address',
  headers: 'custom headers',
  tags: 'provider tags',
  raw: 'raw MIME messages',
  mime: 'raw MIME messages',
} as const;

const FROM_LOCATION =
  'attachments fetched from a path or URL (send the file content as base64, see attachmentFromFile)';

/** Attachment fields the service cannot honour: files by location, and inline (CID) attachments. */
export const UNSUPPORTED_ATTACHMENT_FIELD_NAMES = {
  path: FROM_LOCATION,
  url: FROM_LOCATION,
  href: FROM_LOCATION,
  contentId: 'inline (CID) attachments',
  content_id: 'inline (CID) attachments',
  cid: 'inline (CID) attachments',
  disposition: 'inline (CID) attachments or a content disposition',
} as const;

/** Properties typed `?: never`: declared on a DTO only so that giving one is refused by name. */
export type RefusedFields<T> = { readonly [K in keyof T]?: never };

const ADDRESS_FORMS = 'name@example.com or Display Name <name@example.com>';

/**
 * Every issue text, in one place. Each takes the path of the offending value (`to[7]`, `[3].subject`) and
 * returns a sentence that starts with it, so a message read alone still says which field is wrong.
 */
export const messages = {
  notEmail: (p: string) => `${p || 'the email'} must be an object`,
  notBatch: () => `the batch must be an array of ${MIN_BATCH_ITEMS} to ${MAX_BATCH_ITEMS} emails`,
  batchSize: (n: number) =>
    n === 0
      ? 'the batch is empty; it must hold at least 1 email'
      : `the batch holds ${n} emails; at most ${MAX_BATCH_ITEMS} are allowed, split it`,
  required: (p: string) => `${p} is required`,
  fromRequired: (p: string) => `${p} is required (or set defaultFrom in EmailModule)`,
  addressType: (p: string) => `${p} must be a string holding an email address (${ADDRESS_FORMS})`,
  addressEmpty: (p: string) => `${p} must not be empty; give an email address (${ADDRESS_FORMS})`,
  addressHidden: (p: string) =>
    `${p} holds an invisible or direction-changing character (a control, format or private-use code point such as a bidirectional override, or a lone surrogate); a display name could pose as another address with it`,
  addressInvalid: (p: string) =>
    `${p} is not a valid email address; use ${ADDRESS_FORMS} (quote a name holding , ; : or @)`,
  crlf: (p: string) => `${p} must not contain a line break (CR or LF): it could inject mail headers`,
  toType: (p: string) => `${p} must be an array of 1 to ${MAX_RECIPIENTS} recipient addresses`,
  toEmpty: (p: string) => `${p} must hold at least 1 recipient`,
  toTooMany: (p: string, n: number) => `${p} holds ${n} recipients; at most ${MAX_RECIPIENTS} are allowed`,
  subjectType: (p: string) => `${p} must be a non-empty string`,
  bodyType: (p: string) => `${p} must be a string or null`,
  templateIdType: (p: string) => `${p} must be a positive integer (the id of a saved template) or null`,
  variablesType: (p: string) => `${p} must be an object whose values are strings, or null`,
  variableValue: (p: string) => `${p} must be a string (template variables are strings)`,
  trackingType: (p: string) => `${p} must be true, false or null`,
  subjectMissing: (p: string) => `${p} is required unless templateId is set`,
  bodyMissing: (p: string) =>
    `${p} or text is required: an inline email needs a non-empty html and/or text body (or use templateId)`,
  notWithTemplate: (p: string) => `${p} must be omitted when templateId is set: the template provides it`,
  variablesRequired: (p: string) =>
    `${p} is required when templateId is set (use {} for a template without placeholders)`,
  variablesWithoutTemplate: (p: string) => `${p} is only valid together with templateId`,
  scheduledType: (p: string) =>
    `${p} must be a Date or an ISO 8601 date-time with seconds and a timezone, e.g. 2030-01-31T09:00:00Z, or null`,
  scheduledInvalidDate: (p: string) => `${p} is an invalid Date`,
  scheduledTooFar: (p: string, latest: string) =>
    `${p} is more than 30 days ahead; the service schedules at most 30 days in advance (latest now: ${latest})`,
  attachmentsType: (p: string) => `${p} must be an array of at most ${MAX_ATTACHMENTS} attachments`,
  attachmentsTooMany: (p: string, n: number) =>
    `${p} holds ${n} files; at most ${MAX_ATTACHMENTS} attachments are allowed`,
  attachmentsTooBig: (p: string, bytes: number) =>
    `${p} decode to ${bytes} bytes in total; at most ${MAX_ATTACHMENT_TOTAL_BYTES} bytes (1.3 MiB) are allowed`,
  fileTooBig: (p: string, bytes: number) =>
    `${p} is ${bytes} bytes; attachments may hold at most ${MAX_ATTACHMENT_TOTAL_BYTES} bytes (1.3 MiB) in total`,
  notAFile: (p: string) => `${p} is not a regular file`,
  attachmentType: (p: string) => `${p} must be an object with filename, content and optional contentType`,
  filenameType: (p: string) => `${p} must be a string of 1 to ${MAX_FILENAME_LENGTH} characters`,
  filenameLength: (p: string, n: number) =>
    `${p} is ${n} characters long; it must be 1 to ${MAX_FILENAME_LENGTH} characters, counted as UTF-16 code units (an emoji counts 2)`,
  loneSurrogate: (p: string) =>
    `${p} holds a lone surrogate (half of a UTF-16 pair, U+D800-U+DFFF, often a string cut in the middle of an emoji): it has no UTF-8 form and cannot be sent as it is`,
  bidiSubject: (p: string) =>
    `${p} holds a bidirectional embedding, override or isolate (U+202A-U+202E, U+2066-U+2069): it can make the subject read differently from what it says; remove it`,
  bidiFilename: (p: string) =>
    `${p} holds a bidirectional control character (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F or U+061C): it can disguise the file's real extension; remove it`,
  contentType: (p: string) => `${p} must be a string of base64-encoded file content`,
  contentEmpty: (p: string) => `${p} must not be empty: an attachment needs some content`,
  contentBase64: (p: string) =>
    `${p} is not valid base64 (standard alphabet A-Z a-z 0-9 + /, padded with = to a multiple of 4, ` +
    'no spaces or line breaks)',
  mimeType: (p: string) => `${p} must be a string`,
  unsupported: (p: string, what: string) =>
    `${p} is not supported: the email service does not support ${what}; remove the field`,
  unknownField: (p: string, of: string) => `${p} is not a field of ${of}; remove it`,
  notInBatch: (p: string, what: string) =>
    `${p} is not allowed in a batch: batches do not support ${what}; send this email with send()`,
} as const;

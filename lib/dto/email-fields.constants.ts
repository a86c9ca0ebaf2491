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

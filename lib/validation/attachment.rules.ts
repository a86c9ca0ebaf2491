import type { EmailValidationIssue } from '../errors/email-validation.error.js';
import {
  checkExtraField,
  hasBidiControl,
  hasLineBreak,
  hasLoneSurrogate,
  isRecord,
  textLength,
} from './content.rules.js';
import {
  MAX_ATTACHMENTS,
  MAX_ATTACHMENT_TOTAL_BYTES,
  MAX_FILENAME_LENGTH,
  messages,
} from './validation.constants.js';

type Issues = EmailValidationIssue[];

/**
 * `filename`: required string of 1 to 255 UTF-16 code units (see `unicode-text.rules.ts`), no CR/LF,
 * no lone surrogate, and no bidirectional control at all (embeddings, overrides, isolates, and the
 * marks U+200E, U+200F, U+061C): they let `invoice\u202Efdp.exe` pass for a PDF.
 */
export function checkFilename(value: unknown, path: string, issues: Issues): void {
  if (typeof value !== 'string') return void issues.push({ path, message: messages.filenameType(path) });
  const length = textLength(value);
  if (length === 0 || length > MAX_FILENAME_LENGTH) {
    issues.push({ path, message: messages.filenameLength(path, length) });
  } else if (hasLineBreak(value)) {
    issues.push({ path, message: messages.crlf(path) });
  } else if (hasLoneSurrogate(value)) {
    issues.push({ path, message: messages.loneSurrogate(path) });
  } else if (hasBidiControl(value, true)) {
    issues.push({ path, message: messages.bidiFilename(path) });
  }
}

/** `content`: required, non-empty, real base64. Returns the decoded size, or 0 when the content is bad. */
export function checkContent(value: unknown, path: string, issues: Issues): number {
  const size = typeof value === 'string' ? base64DecodedLength(value) : -1;
  if (size >= 0) return size;
  const message =
    typeof value !== 'string'
      ? messages.contentType(path)
      : value.length === 0
        ? messages.contentEmpty(path)
        : messages.contentBase64(path);
  issues.push({ path, message });
  return 0;
}

/** `contentType`: optional string without CR/LF. Its form is left to the service. */
export function checkMimeType(value: unknown, path: string, issues: Issues): void {
  if (value === undefined) return;
  if (typeof value !== 'string') issues.push({ path, message: messages.mimeType(path) });
  else if (hasLineBreak(value)) issues.push({ path, message: messages.crlf(path) });
  else if (hasLoneSurrogate(value)) issues.push({ path, message: messages.loneSurrogate(path) });
}

/** One attachment, all fields and unknown/unsupported keys. Returns its decoded size (0 when bad). */
export function checkAttachment(value: unknown, path: string, issues: Issues): number {
  if (!isRecord(value)) {
    issues.push({ path, message: messages.attachmentType(path) });
    return 0;
  }
  for (const key in value) {
    if (key === 'filename' || key === 'content' || key === 'contentType') continue;
    checkExtraField(key, value[key], `${path}.${key}`, 'attachment', issues);
  }
  checkFilename(value.filename, `${path}.filename`, issues);
  checkMimeType(value.contentType, `${path}.contentType`, issues);
  return checkContent(value.content, `${path}.content`, issues);
}

/**
 * `attachments`: an array of at most 5 attachments whose decoded sizes add up to at most 1.3 MiB.
 * With `deep`, every attachment is fully checked too; without it (the DTO, which validates items as
 * nested `AttachmentDto`s), only the list rules are, counting the sizes of the valid contents.
 */
export function checkAttachmentList(value: unknown, prefix: string, deep: boolean, issues: Issues): void {
  if (value === undefined) return;
  const path = `${prefix}attachments`;
  if (!Array.isArray(value)) return void issues.push({ path, message: messages.attachmentsType(path) });
  if (value.length > MAX_ATTACHMENTS) {
    issues.push({ path, message: messages.attachmentsTooMany(path, value.length) });
  }
  let total = 0;
  for (let i = 0; i < value.length; i++) {
    const item: unknown = value[i];
    if (deep) total += checkAttachment(item, `${path}[${i}]`, issues);
    else if (!isRecord(item))
      issues.push({ path: `${path}[${i}]`, message: messages.attachmentType(`${path}[${i}]`) });
    else if (typeof item.content === 'string') total += Math.max(0, base64DecodedLength(item.content));
  }
  if (total > MAX_ATTACHMENT_TOTAL_BYTES) {
    issues.push({ path, message: messages.attachmentsTooBig(path, total) });
  }
}

const ALPHABET = new Uint8Array(128);
for (const ch of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/') {
  ALPHABET[ch.charCodeAt(0)] = 1;
}

/**
 * Size in bytes of what a standard base64 string decodes to, or `-1` when it is not base64.
 * Accepted: the standard alphabet (`A-Z a-z 0-9 + /`), a length that is a multiple of 4, and at most two `=`
 * of padding at the very end. Refused: the empty string, whitespace and line breaks, the URL-safe alphabet,
 * missing padding. One scan over a lookup table; the size comes from the length and the padding.
 *
 * @example
 * base64DecodedLength('aGk=') // 2
 * base64DecodedLength('aGk')  // -1
 */
export function base64DecodedLength(s: string): number {
  const len = s.length;
  if (len === 0 || (len & 3) !== 0) return -1;
  let pad = 0;
  if (s.charCodeAt(len - 1) === 61) pad = s.charCodeAt(len - 2) === 61 ? 2 : 1;
  const end = len - pad;
  for (let i = 0; i < end; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128 || ALPHABET[c] === 0) return -1;
  }
  return (len >>> 2) * 3 - pad;
}

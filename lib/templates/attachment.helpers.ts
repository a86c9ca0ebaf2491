import { readFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { EmailValidationError, type EmailValidationIssue } from '../errors/email-validation.error.js';
import type { AttachmentInput } from '../interfaces/email-input.interface.js';
import { checkFilename, checkMimeType } from '../validation/attachment.rules.js';
import { MAX_ATTACHMENT_TOTAL_BYTES } from '../validation/validation.constants.js';
import { messages } from '../validation/validation.constants.js';

function checkSize(bytes: number, issues: EmailValidationIssue[]): void {
  if (bytes === 0) issues.push({ path: 'content', message: messages.contentEmpty('content') });
  if (bytes > MAX_ATTACHMENT_TOTAL_BYTES)
    issues.push({ path: 'content', message: messages.fileTooBig('content', bytes) });
}

/**
 * Builds an attachment from bytes in memory: base64-encodes them and checks the filename, the content type
 * and the size (not empty, at most 1.3 MiB, the limit for all attachments of an email together).
 *
 * @throws EmailValidationError listing every problem.
 * @example
 * await email.send({ ...mail, attachments: [attachmentFromBuffer(pdf, 'invoice.pdf', 'application/pdf')] });
 * @publicApi
 */
export function attachmentFromBuffer(
  buffer: Uint8Array,
  filename: string,
  contentType?: string,
): AttachmentInput {
  const issues: EmailValidationIssue[] = [];
  checkFilename(filename, 'filename', issues);
  checkMimeType(contentType, 'contentType', issues);
  checkSize(buffer.byteLength, issues);
  if (issues.length > 0) throw new EmailValidationError(issues);
  const content = Buffer.from(buffer.buffer, buffer.byteOffset, buffer.byteLength).toString('base64');
  return contentType === undefined ? { filename, content } : { filename, content, contentType };
}

/**
 * Reads a file into an attachment named after the file (or `filename`). The size is checked before
 * reading, so an oversized file is refused without loading it. File-system errors (ENOENT...) are thrown as is.
 *
 * @throws EmailValidationError when the file is not a regular file, empty or above 1.3 MiB, or a name is bad.
 * @example
 * const report = await attachmentFromFile('/tmp/report.csv', 'text/csv');
 * @publicApi
 */
export async function attachmentFromFile(
  path: string,
  contentType?: string,
  filename: string = basename(path),
): Promise<AttachmentInput> {
  const info = await stat(path);
  const issues: EmailValidationIssue[] = [];
  if (!info.isFile())
    issues.push({ path: 'path', message: messages.notAFile(`path ${JSON.stringify(path)}`) });
  else checkSize(info.size, issues);
  if (issues.length > 0) throw new EmailValidationError(issues);
  return attachmentFromBuffer(await readFile(path), filename, contentType);
}

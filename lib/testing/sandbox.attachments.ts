import { SANDBOX_MAX_ATTACHMENT_BYTES, SANDBOX_MAX_ATTACHMENTS } from './sandbox.constants.js';
import { SandboxHttpError } from './sandbox.http.js';
import { textProblem } from './sandbox.text.js';

/** Most attachments on one send. */
export const MAX_ATTACHMENTS = SANDBOX_MAX_ATTACHMENTS;
/** Largest combined decoded size of the attachments of one send: 1.3 MiB, in whole bytes. */
export const MAX_ATTACHMENT_BYTES = SANDBOX_MAX_ATTACHMENT_BYTES;

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const ALLOWED = new Set(['filename', 'content', 'contentType']);

const bad = (message: string): SandboxHttpError => new SandboxHttpError(400, message);

/** Decoded size of a standard, padded base64 string, or -1 when it is not one. */
export function decodedBase64Size(content: string): number {
  if (content.length % 4 !== 0 || !BASE64.test(content)) return -1;
  const padding = content.endsWith('==') ? 2 : content.endsWith('=') ? 1 : 0;
  return (content.length / 4) * 3 - padding;
}

/**
 * Checks the `attachments` of a single send: at most 5, filename 1 to 255 characters, content
 * non-empty standard base64, at most 1.3 MiB decoded in total. Returns how many there are.
 *
 * @example
 * checkAttachments([{ filename: 'a.txt', content: 'aGk=' }], true); // 1
 */
export function checkAttachments(value: unknown, rejectUnknown: boolean): number {
  if (value === undefined) return 0;
  if (!Array.isArray(value)) throw bad('attachments must be an array');
  if (value.length > MAX_ATTACHMENTS) throw bad(`attachments may hold at most ${MAX_ATTACHMENTS} files`);
  let total = 0;
  value.forEach((item: unknown, i) => {
    const at = `attachments[${i}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      throw bad(`${at} must be an object`);
    }
    const a = item as Record<string, unknown>;
    if (rejectUnknown) {
      for (const key of Object.keys(a)) if (!ALLOWED.has(key)) throw bad(`${at}.${key} is not a known field`);
    }
    if (typeof a.filename !== 'string' || a.filename.length < 1 || a.filename.length > 255) {
      throw bad(`${at}.filename must be a string of 1 to 255 characters (UTF-16 code units)`);
    }
    // A line break in a filename would end a MIME header line: refused, as the client refuses it.
    if (/[\r\n]/.test(a.filename)) throw bad(`${at}.filename must not contain a line break`);
    const problem = textProblem(a.filename, `${at}.filename`, 'all');
    if (problem !== null) throw bad(problem);
    if (typeof a.content !== 'string' || a.content.length < 1) {
      throw bad(`${at}.content must be a non-empty base64 string`);
    }
    if (a.contentType !== undefined && typeof a.contentType !== 'string') {
      throw bad(`${at}.contentType must be a string`);
    }
    const typeProblem =
      a.contentType === undefined ? null : textProblem(a.contentType, `${at}.contentType`, 'none');
    if (typeProblem !== null) throw bad(typeProblem);
    const size = decodedBase64Size(a.content);
    if (size < 0) throw bad(`${at}.content is not valid base64`);
    total += size;
  });
  if (total > MAX_ATTACHMENT_BYTES) {
    throw bad(`attachments total ${total} decoded bytes, more than the 1.3 MiB allowed`);
  }
  return value.length;
}

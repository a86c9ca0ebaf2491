import type { AttachmentInput } from '../interfaces/email-input.interface.js';
import { EmailRule } from './email-rule.decorator.js';
import { ATTACHMENT_OPENAPI, type OpenApiMetadata } from './email-openapi.constants.js';

/**
 * One attachment of a single send, for `ValidationPipe`. Unsupported attachment fields are declared only so
 * that they are refused by name: files by `path`/`url`/`href` and inline (CID) attachments.
 *
 * @example
 * { "filename": "invoice.pdf", "content": "JVBERi0xLjcK...", "contentType": "application/pdf" }
 */
export class AttachmentDto implements AttachmentInput {
  /** OpenAPI metadata that `@nestjs/swagger` reads (see docs/openapi.md). @internal */
  static _OPENAPI_METADATA_FACTORY = (): OpenApiMetadata => ATTACHMENT_OPENAPI;

  /** File name shown to the recipient: 1 to 255 characters, no line breaks. */
  @EmailRule('filename') filename!: string;
  /** The file's bytes in standard, padded base64; not empty. */
  @EmailRule('content') content!: string;
  /** MIME type such as `application/pdf`; left to the service when omitted. */
  @EmailRule('contentType') contentType?: string;

  /** Refused: the service does not fetch files; send the content. */
  @EmailRule('unsupportedInAttachment') path?: never;
  /** Refused: the service does not fetch files; send the content. */
  @EmailRule('unsupportedInAttachment') url?: never;
  /** Refused: the service does not fetch files; send the content. */
  @EmailRule('unsupportedInAttachment') href?: never;
  /** Refused: inline (CID) attachments are not supported. */
  @EmailRule('unsupportedInAttachment') contentId?: never;
  /** Refused: inline (CID) attachments are not supported. */
  @EmailRule('unsupportedInAttachment') content_id?: never;
  /** Refused: inline (CID) attachments are not supported. */
  @EmailRule('unsupportedInAttachment') cid?: never;
  /** Refused: inline (CID) attachments are not supported; every file is a regular attachment. */
  @EmailRule('unsupportedInAttachment') disposition?: never;
}

import type { AttachmentInput } from '../interfaces/email-input.interface.js';
import { type RefusedFields, UNSUPPORTED_ATTACHMENT_FIELD_NAMES } from './email-fields.constants.js';
import { EmailRule } from './email-rule.decorator.js';
import 'reflect-metadata';
import {
  ATTACHMENT_OPENAPI,
  ATTACHMENT_SCHEMA,
  OPENAPI_SCHEMA_METADATA,
  type OpenApiMetadata,
} from './email-openapi.constants.js';

/**
 * One attachment of a single send, for `ValidationPipe`. Unsupported attachment fields are declared only so
 * that they are refused by name: files by `path`/`url`/`href` and inline (CID) attachments.
 *
 * @example
 * { "filename": "invoice.pdf", "content": "JVBERi0xLjcK...", "contentType": "application/pdf" }
 * @publicApi
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class AttachmentDto implements AttachmentInput {
  /** OpenAPI metadata that `@nestjs/swagger` reads (see docs/openapi.md). @internal */
  static _OPENAPI_METADATA_FACTORY = (): OpenApiMetadata => ATTACHMENT_OPENAPI;

  /** File name shown to the recipient: 1 to 255 characters, no line breaks. */
  @EmailRule('filename') filename!: string;
  /** The file's bytes in standard, padded base64; not empty. */
  @EmailRule('content') content!: string;
  /** MIME type such as `application/pdf`; left to the service when omitted. */
  @EmailRule('contentType') contentType?: string;
}

// Unsupported attachment fields, refused by name, from the field table.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type
export interface AttachmentDto extends RefusedFields<typeof UNSUPPORTED_ATTACHMENT_FIELD_NAMES> {}
for (const name of Object.keys(UNSUPPORTED_ATTACHMENT_FIELD_NAMES)) {
  EmailRule('unsupportedInAttachment')(AttachmentDto.prototype, name);
}
// The schema says "no other properties" and why (see docs/openapi.md); read by @nestjs/swagger.
Reflect.defineMetadata(OPENAPI_SCHEMA_METADATA, [ATTACHMENT_SCHEMA], AttachmentDto);

import 'reflect-metadata';
import type { AttachmentInput } from '../interfaces/email-input.interface.js';
import { UNSUPPORTED_ATTACHMENT_FIELDS } from './content.rules.js';
import { EmailRule } from './email-rule.decorator.js';
import {
  closedSchema,
  listRefused,
  OPENAPI_SCHEMA_METADATA,
  type OpenApiMetadata,
} from './openapi.helpers.js';
import {
  MAX_FILENAME_LENGTH,
  type RefusedFields,
  UNSUPPORTED_ATTACHMENT_FIELD_NAMES,
} from './validation.constants.js';

/** `AttachmentDto`. */
export const ATTACHMENT_OPENAPI: OpenApiMetadata = {
  filename: {
    required: true,
    type: () => String,
    minLength: 1,
    maxLength: MAX_FILENAME_LENGTH,
    description: `1 to ${MAX_FILENAME_LENGTH} characters.`,
    example: 'invoice.pdf',
  },
  content: {
    required: true,
    type: () => String,
    format: 'byte',
    minLength: 1,
    description: 'The file, base64-encoded (standard alphabet, padded, no line breaks).',
  },
  contentType: {
    required: false,
    type: () => String,
    description: 'MIME type, such as `application/pdf`.',
    example: 'application/pdf',
  },
};

/** Schema-level metadata of `AttachmentDto`. */
export const ATTACHMENT_SCHEMA = closedSchema(
  'One attachment, its content given inline as base64.',
  `the service does not support ${listRefused(UNSUPPORTED_ATTACHMENT_FIELDS)}`,
);

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

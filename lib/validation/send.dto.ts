import 'reflect-metadata'; // class-transformer's @Type reads design-time types
import { Type } from 'class-transformer';
import { ValidateNested } from 'class-validator';
import type { EmailInput } from '../interfaces/email-input.interface.js';
import { AttachmentDto } from './attachment.dto.js';
import { EMAIL_CONTENT_OPENAPI, EmailContentDto } from './content.dto.js';
import { UNSUPPORTED_EMAIL_FIELDS } from './content.rules.js';
import { EmailRule } from './email-rule.decorator.js';
import {
  closedSchema,
  listRefused,
  OPENAPI_SCHEMA_METADATA,
  type OpenApiMetadata,
} from './openapi.helpers.js';
import { MAX_ATTACHMENT_TOTAL_BYTES, MAX_ATTACHMENTS } from './validation.constants.js';

const MIB = (MAX_ATTACHMENT_TOTAL_BYTES / 1024 / 1024).toFixed(1);

/**
 * `SendEmailDto`: the content fields first (so `from` and `to` lead), then scheduling and attachments;
 * `attachments` gets its item type from the DTO.
 */
export const SEND_EMAIL_OPENAPI: OpenApiMetadata = {
  ...EMAIL_CONTENT_OPENAPI,
  scheduledAt: {
    required: false,
    type: 'string',
    format: 'date-time',
    nullable: true,
    description:
      'RFC 3339 date-time with a timezone, at most 30 days (720 hours) ahead; a past time sends at once. Growth plan and above.',
    example: '2030-01-01T09:00:00Z',
  },
  attachments: {
    required: false,
    maxItems: MAX_ATTACHMENTS,
    description: `At most ${MAX_ATTACHMENTS} files, at most ${MIB} MiB (${MAX_ATTACHMENT_TOTAL_BYTES} bytes) decoded in total.`,
  },
};

/** Schema-level metadata of `SendEmailDto`. */
export const SEND_EMAIL_SCHEMA = closedSchema(
  'One email: inline (subject plus html and/or text) or from a saved template (templateId plus variables).',
  `the service does not support ${listRefused(UNSUPPORTED_EMAIL_FIELDS)}`,
);

/**
 * Body of a single send, for `ValidationPipe`; the same rules `EmailService.send` applies. Use it with
 * `whitelist: true, forbidNonWhitelisted: true` so that unknown fields are refused too.
 *
 * @example
 * \@Post('mail')
 * send(@Body() dto: SendEmailDto) { return this.email.send(dto); }
 * @publicApi
 */
export class SendEmailDto extends EmailContentDto implements EmailInput {
  /** OpenAPI metadata that `@nestjs/swagger` reads (see docs/openapi.md). @internal */
  static override _OPENAPI_METADATA_FACTORY = (): OpenApiMetadata => ({
    ...SEND_EMAIL_OPENAPI,
    attachments: { ...SEND_EMAIL_OPENAPI.attachments, type: () => [AttachmentDto] },
  });

  /** A `Date` or RFC 3339 date-time with timezone; at most 30 days ahead; a past time sends at once. */
  @EmailRule('scheduledAt') scheduledAt?: string | Date | null;

  /** At most 5 files, at most 1.3 MiB decoded in total. */
  @EmailRule('attachments')
  @ValidateNested({ each: true })
  @Type(() => AttachmentDto)
  attachments?: AttachmentDto[];
}

// The schema says "no other properties" and why (see docs/openapi.md); read by @nestjs/swagger.
Reflect.defineMetadata(OPENAPI_SCHEMA_METADATA, [SEND_EMAIL_SCHEMA], SendEmailDto);

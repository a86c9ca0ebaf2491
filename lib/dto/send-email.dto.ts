import 'reflect-metadata'; // class-transformer's @Type reads design-time types
import { Type } from 'class-transformer';
import { ValidateNested } from 'class-validator';
import type { EmailInput } from '../interfaces/email-input.interface.js';
import { AttachmentDto } from './attachment.dto.js';
import { EmailContentDto } from './email-content.dto.js';
import { EmailRule } from './email-rule.decorator.js';
import {
  OPENAPI_SCHEMA_METADATA,
  SEND_EMAIL_OPENAPI,
  SEND_EMAIL_SCHEMA,
  type OpenApiMetadata,
} from './email-openapi.constants.js';

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

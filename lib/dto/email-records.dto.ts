import type {
  EmailDetail,
  EmailEvent,
  EmailLog,
  EmailStatus,
} from '../interfaces/email-records.interface.js';
import type { OpenApiMetadata } from './email-openapi.constants.js';
import {
  EMAIL_DETAIL_OPENAPI,
  EMAIL_EVENT_OPENAPI,
  EMAIL_LOG_OPENAPI,
} from './email-records-openapi.constants.js';

/**
 * A message record (`EmailLog`) as a class, for OpenAPI: name it in `@ApiCreatedResponse` or `@ApiOkResponse`
 * and `@nestjs/swagger` documents the answer of a route that returns what `EmailService` gave it. Nothing
 * creates instances: `EmailService` returns plain records, which JSON writes with dates as strings.
 *
 * @example
 * \@Post() \@ApiCreatedResponse({ type: EmailLogDto })
 * send(@Body() dto: SendEmailDto): Promise<EmailLog> { return this.email.send(dto); }
 * @publicApi
 */
export class EmailLogDto implements EmailLog {
  /** OpenAPI metadata that `@nestjs/swagger` reads (see docs/openapi.md). @internal */
  static _OPENAPI_METADATA_FACTORY = (): OpenApiMetadata => EMAIL_LOG_OPENAPI;

  declare id: number;
  declare providerEmailId: string | null;
  declare fromAddress: string;
  declare toAddresses: string[];
  declare subject: string;
  declare status: EmailStatus;
  declare errorMessage: string | null;
  declare scheduledAt: Date | null;
  declare trackOpens: boolean;
  declare trackClicks: boolean;
  declare openedAt: Date | null;
  declare clickedAt: Date | null;
  declare openCount: number;
  declare clickCount: number;
  declare createdAt: Date;
  declare updatedAt: Date;
}

/**
 * A message record with its bodies (`EmailDetail`, what `EmailService.get` returns) as a class, for OpenAPI.
 * @example \@Get(':id') \@ApiOkResponse({ type: EmailDetailDto })
 * @publicApi
 */
export class EmailDetailDto extends EmailLogDto implements EmailDetail {
  /** OpenAPI metadata that `@nestjs/swagger` reads (see docs/openapi.md). @internal */
  static override _OPENAPI_METADATA_FACTORY = (): OpenApiMetadata => EMAIL_DETAIL_OPENAPI;

  declare html: string | null;
  declare bodyText: string | null;
}

/**
 * An open or click of a message (`EmailEvent`, what `EmailService.listEvents` returns items of) as a
 * class, for OpenAPI.
 * @example \@Get(':id/events') \@ApiOkResponse({ type: [EmailEventDto] })
 * @publicApi
 */
export class EmailEventDto implements EmailEvent {
  /** OpenAPI metadata that `@nestjs/swagger` reads (see docs/openapi.md). @internal */
  static _OPENAPI_METADATA_FACTORY = (): OpenApiMetadata => EMAIL_EVENT_OPENAPI;

  declare id: number;
  declare type: 'open' | 'click';
  declare url: string | null;
  declare occurredAt: Date;
}

import type { EmailValidationIssue } from '../errors/email-validation.error.js';
import type {
  EmailDetail,
  EmailEvent,
  EmailLog,
  EmailStatus,
} from '../interfaces/email-records.interface.js';
import type { OpenApiMetadata, OpenApiPropertyMetadata } from './openapi.helpers.js';

/** The response classes for OpenAPI: message records as `EmailService` returns them, and error bodies. */

/** The status words the contract names as lifecycle kinds; the list is open (see `EmailStatus`). */
const KNOWN_STATUSES = 'sent, scheduled, failed, canceled, bounced, complained, opened, clicked';

const integer = (description: string, example?: number): OpenApiPropertyMetadata => ({
  required: true,
  type: 'integer',
  description,
  ...(example === undefined ? {} : { example }),
});

const dateTime = (description: string, nullable = false): OpenApiPropertyMetadata => ({
  required: true,
  type: 'string',
  format: 'date-time',
  ...(nullable ? { nullable: true } : {}),
  description,
});

const nullableString = (description: string): OpenApiPropertyMetadata => ({
  required: true,
  type: 'string',
  nullable: true,
  description,
});

/** `EmailLogDto`: a message record as `EmailService` returns it and JSON writes it (dates as strings). */
export const EMAIL_LOG_OPENAPI: OpenApiMetadata = {
  id: integer('Message id at the service.', 1),
  providerEmailId: nullableString('Identifier at the sending provider.'),
  fromAddress: { required: true, type: 'string', example: 'Shop <shop@example.com>' },
  toAddresses: { required: true, type: 'array', items: { type: 'string' }, example: ['ada@example.com'] },
  subject: { required: true, type: 'string', example: 'Your order' },
  status: {
    required: true,
    type: 'string',
    description: `A free string: ${KNOWN_STATUSES}, or another word the service may add. A send answers sent or scheduled; sent means accepted by the provider, not delivered.`,
    example: 'sent',
  },
  errorMessage: nullableString("The service's reason when the message failed."),
  scheduledAt: dateTime('When a scheduled message goes out.', true),
  trackOpens: { required: true, type: 'boolean' },
  trackClicks: { required: true, type: 'boolean' },
  openedAt: dateTime('First recorded open; null until one happens.', true),
  clickedAt: dateTime('First recorded click; null until one happens.', true),
  openCount: integer('Opens recorded so far.', 0),
  clickCount: integer('Clicks recorded so far.', 0),
  createdAt: dateTime('When the record was created.'),
  updatedAt: dateTime('When the record last changed.'),
};

/** `EmailDetailDto`: the record, then its bodies. */
export const EMAIL_DETAIL_OPENAPI: OpenApiMetadata = {
  ...EMAIL_LOG_OPENAPI,
  html: nullableString('The html body as sent (tracking pixel and links included).'),
  bodyText: nullableString('The plain-text body as sent.'),
};

/** `EmailEventDto`: an open or a click. */
export const EMAIL_EVENT_OPENAPI: OpenApiMetadata = {
  id: integer('Event id.', 1),
  type: { required: true, type: 'string', enum: ['open', 'click'] },
  url: nullableString('Destination of a click; null for an open.'),
  occurredAt: dateTime('When it was recorded.'),
};

/** `EmailValidationIssueDto`: one problem of a refused input. */
export const EMAIL_VALIDATION_ISSUE_OPENAPI: OpenApiMetadata = {
  path: {
    required: true,
    type: 'string',
    description: 'Where the problem is: `to[1]`, `attachments[0].content`, `cc`, `[3].to[7]` in a batch.',
    example: 'to[1]',
  },
  message: { required: true, type: 'string', description: 'What is wrong, naming the path.' },
};

/** `EmailErrorResponseDto`: the body of every answer `EmailErrorInterceptor` gives. */
export const EMAIL_ERROR_RESPONSE_OPENAPI: OpenApiMetadata = {
  statusCode: integer('The HTTP status of the answer.', 502),
  message: {
    required: true,
    type: 'string',
    description:
      "A fixed text safe for end users; never the API key, the request to the service or the service's own reason (that goes to the log).",
  },
  error: { required: true, type: 'string', description: 'The HTTP reason phrase.', example: 'Bad Gateway' },
  outcome: {
    required: false,
    type: 'string',
    enum: ['not-sent', 'uncertain'],
    description:
      'For a send: not-sent (nothing was created, a retry is safe) or uncertain (a message may exist).',
  },
  idempotencyKey: {
    required: false,
    type: 'string',
    description: 'An uncertain send: retry only with this key and the same content.',
  },
  retryAfterSeconds: {
    required: false,
    type: 'integer',
    minimum: 1,
    description: 'A 429: the wait the service asked for, also in the Retry-After header.',
  },
};

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

/**
 * One problem of a refused input (`issues[]` of a 400), as a class for OpenAPI.
 */
export class EmailValidationIssueDto implements EmailValidationIssue {
  /** OpenAPI metadata that `@nestjs/swagger` reads (see docs/openapi.md). @internal */
  static _OPENAPI_METADATA_FACTORY = (): OpenApiMetadata => EMAIL_VALIDATION_ISSUE_OPENAPI;

  declare path: string;
  declare message: string;
}

/**
 * The 400 body for an input refused before sending, as `EmailErrorInterceptor` (and `ValidationPipe`
 * with `emailValidationExceptionFactory`) answers it, as a class for OpenAPI.
 *
 * @example
 * \@Post() \@ApiBadRequestResponse({ type: EmailValidationErrorResponseDto })
 * @publicApi
 */
export class EmailValidationErrorResponseDto {
  /** OpenAPI metadata that `@nestjs/swagger` reads (see docs/openapi.md). @internal */
  static _OPENAPI_METADATA_FACTORY = (): OpenApiMetadata => ({
    statusCode: { ...EMAIL_ERROR_RESPONSE_OPENAPI.statusCode, example: 400 },
    message: {
      required: true,
      type: 'string',
      description: 'Every problem in one text; the same problems one by one in `issues`.',
      example: 'Invalid email input (1 problem): cc is not supported: ...',
    },
    error: { ...EMAIL_ERROR_RESPONSE_OPENAPI.error, example: 'Bad Request' },
    outcome: {
      required: true,
      type: 'string',
      enum: ['not-sent'],
      description: 'Nothing was sent: the input was refused before any request.',
    },
    issues: { required: true, type: () => [EmailValidationIssueDto] },
  });

  declare statusCode: 400;
  declare message: string;
  declare error: string;
  declare outcome: 'not-sent';
  declare issues: EmailValidationIssueDto[];
}

/**
 * The body of any other answer `EmailErrorInterceptor` gives (502, 503, 504, 409, 429, ...), as a class
 * for OpenAPI. The message is a fixed text that is safe for end users.
 * @example \@ApiBadGatewayResponse({ type: EmailErrorResponseDto })
 * @publicApi
 */
export class EmailErrorResponseDto {
  /** OpenAPI metadata that `@nestjs/swagger` reads (see docs/openapi.md). @internal */
  static _OPENAPI_METADATA_FACTORY = (): OpenApiMetadata => EMAIL_ERROR_RESPONSE_OPENAPI;

  declare statusCode: number;
  declare message: string;
  declare error: string;
  declare outcome?: 'not-sent' | 'uncertain';
  declare idempotencyKey?: string;
  declare retryAfterSeconds?: number;
}

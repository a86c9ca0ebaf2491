import type { EmailValidationIssue } from '../errors/email-validation.error.js';
import type { OpenApiMetadata } from './email-openapi.constants.js';
import {
  EMAIL_ERROR_RESPONSE_OPENAPI,
  EMAIL_VALIDATION_ISSUE_OPENAPI,
} from './email-records-openapi.constants.js';

/**
 * One problem of a refused input (`issues[]` of a 400), as a class for OpenAPI.
 * @publicApi
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

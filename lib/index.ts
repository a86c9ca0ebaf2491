// The package's public surface, name by name: what users need to send, configure, test and catch
// errors. Every name here carries `@publicApi` in its JSDoc, has its row (why it is public) in CONTRIBUTING.md
// "Public surface" (which also writes how many runtime values there are) and is pinned by
// test/core/public-surface.spec.ts; anything else under lib/ is internal and may change in any release.

// Module and service
export { EmailModule } from './email.module.js';
export type { EmailModuleExtras } from './email.module-definition.js';
export { EmailService } from './service/email.service.js';
export { getEmailServiceToken } from './email.module-definition.js';
export { InjectEmailHealthIndicator, InjectEmailService } from './email.module.js';

// Options and records (types only)
export type { EmailModuleOptions } from './interfaces/email-module-options.interface.js';
export type {
  EmailAccount,
  EmailAccountResolver,
  EmailAccountsOption,
} from './interfaces/email-account.interface.js';
export type { EmailRateBudget, EmailRateLimitOptions } from './interfaces/rate-limit-options.interface.js';
export type { SendManyOptions, SendManyProgress, SendManyResult } from './interfaces/send-many.interface.js';
export type {
  EmailDetail,
  EmailEvent,
  EmailLog,
  EmailStatus,
  FindSentCertainty,
  FindSentResult,
} from './interfaces/email-records.interface.js';
export type { AttachmentInput, BatchEmailItem, EmailInput } from './interfaces/email-input.interface.js';
export type {
  CallOptions,
  FindSentOptions,
  ListOptions,
  SendOptions,
} from './interfaces/call-options.interface.js';

// Configuration from the environment
export {
  createEmailConfig,
  emailConfig,
  type EmailConfigAsyncOptions,
  type EmailConfigFactory,
  type EmailConfigOptions,
} from './config/email-config.options.js';
export { parseEmailEnv, type EmailEnvOptions } from './config/email-env.parser.js';

// Errors
export { EmailError, type SendOutcome } from './errors/email.error.js';
export {
  EmailApiError,
  EmailAuthenticationError,
  EmailBadRequestError,
  EmailConflictError,
  EmailForbiddenError,
  EmailNotFoundError,
  EmailProviderError,
  EmailRateLimitError,
  EmailServerError,
  EmailUnavailableError,
} from './errors/email-api.error.js';
export {
  EmailAbortError,
  EmailConnectionError,
  EmailTimeoutError,
  EmailUnexpectedResponseError,
} from './errors/email-transport.error.js';
export { EmailValidationError, type EmailValidationIssue } from './errors/email-validation.error.js';
export { EmailSendUncertainError } from './errors/email-send-uncertain.error.js';
export { EmailOptionsError } from './errors/email-options.error.js';
export { EmailBatchUncertainError } from './errors/email-batch-uncertain.error.js';
export { EmailAccountError, type EmailAccountProblem } from './errors/email-account.error.js';
export { EmailSuppressedError, type EmailSuppressedAddress } from './errors/email-suppressed.error.js';

// The suppression list
export { EmailSuppressions } from './suppression/email-suppressions.service.js';
export type {
  EmailSuppression,
  EmailSuppressionAddOptions,
  EmailSuppressionHealth,
  EmailSuppressionListOptions,
  EmailSuppressionOptions,
  EmailSuppressionPage,
  EmailSuppressionPgPool,
  EmailSuppressionReason,
  EmailSuppressionScope,
  EmailSuppressionSweepOptions,
} from './interfaces/suppression.interface.js';

// Input DTOs and builders
export { AttachmentDto } from './validation/attachment.dto.js';
export { BatchEmailItemDto } from './validation/batch.dto.js';
export { SendEmailDto } from './validation/send.dto.js';
export { attachmentFromBuffer, attachmentFromFile } from './templates/attachment.helpers.js';
export { IsEmailAddress } from './validation/address.decorator.js';
export { scheduleAt, scheduleIn, type ScheduleOptions } from './templates/schedule.helpers.js';

// Response classes for OpenAPI (records and error bodies)
export { EmailDetailDto, EmailEventDto, EmailLogDto } from './validation/response.dto.js';
export { EmailErrorResponseDto, EmailValidationErrorResponseDto } from './validation/response.dto.js';

// Nest HTTP errors
export { EmailErrorInterceptor } from './interceptors/email-error.interceptor.js';
export {
  EMAIL_ERROR_INTERCEPTOR_OPTIONS,
  type EmailErrorInterceptorOptions,
} from './interceptors/email-error.options.js';
export { emailValidationExceptionFactory } from './interceptors/validation-pipe.helpers.js';

// Health
export { EmailHealthIndicator } from './health/email.health.js';
export type {
  EmailHealthCheckOptions,
  EmailHealthDown,
  EmailHealthReason,
  EmailHealthResult,
  EmailHealthUp,
} from './health/email-health.interface.js';

// Typed templates
export { defineEmailTemplates } from './templates/email-templates.helpers.js';
export type {
  EmailTemplate,
  EmailTemplateDefinition,
  EmailTemplateInput,
  EmailTemplateSendFields,
  EmailTemplateVariables,
  EmailTemplates,
} from './templates/email-template.interface.js';

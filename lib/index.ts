// The package's public surface, name by name: what users need to send, configure, test and catch
// errors. Every name here carries `@publicApi` in its JSDoc and is pinned by
// test/core/public-surface.spec.ts; anything else under lib/ is internal and may change in any release.

// Module and service
export { EmailModule } from './email.module.js';
export type { EmailModuleExtras } from './email.module-definition.js';
export { EmailService } from './service/email.service.js';
export { PACKAGE_VERSION } from './config/email.constants.js';
export { getEmailHealthIndicatorToken, getEmailServiceToken } from './decorators/email-instance.tokens.js';
export {
  InjectEmailHealthIndicator,
  InjectEmailService,
} from './decorators/inject-email-service.decorator.js';

// Options and records (types only)
export type { EmailModuleOptions } from './interfaces/email-module-options.interface.js';
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
} from './config/email.config.js';
export { parseEmailEnv, type EmailEnvOptions } from './config/email-env.parser.js';
export { EmailEnvError } from './config/email-env.error.js';

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
export { EmailJobConflictError, EmailQueueUnavailableError } from './errors/email-queue.error.js';

// Idempotency keys and reconciliation
export { generateIdempotencyKey, isValidIdempotencyKey } from './validation/idempotency-key.helpers.js';
export { FIND_SENT_SKEW_MS } from './delivery/find-sent.policy.js';

// Input DTOs, checks, limits and helpers
export { AttachmentDto } from './validation/attachment.dto.js';
export { BatchEmailItemDto } from './validation/batch.dto.js';
export { SendEmailDto } from './validation/send.dto.js';
export { attachmentFromBuffer, attachmentFromFile } from './templates/attachment.helpers.js';
export { isEmailAddress, IsEmailAddress } from './validation/address.decorator.js';
export { validateBatchItems } from './validation/batch.rules.js';
export { validateEmailInput, type ValidateOptions } from './validation/send.rules.js';
export { EmailRule, type EmailRuleName } from './validation/email-rule.decorator.js';
export {
  MAX_ATTACHMENT_TOTAL_BYTES,
  MAX_ATTACHMENTS,
  MAX_BATCH_ITEMS,
  MAX_FILENAME_LENGTH,
  MAX_RECIPIENTS,
  MAX_SCHEDULE_AHEAD_MS,
} from './validation/validation.constants.js';
export { scheduleAt, scheduleIn, type ScheduleOptions } from './templates/schedule.helpers.js';

// Response classes for OpenAPI (records and error bodies)
export { EmailDetailDto, EmailEventDto, EmailLogDto } from './validation/response.dto.js';
export {
  EmailErrorResponseDto,
  EmailValidationErrorResponseDto,
  EmailValidationIssueDto,
} from './validation/response.dto.js';

// Nest HTTP errors
export { EmailErrorInterceptor } from './interceptors/email-error.interceptor.js';
export { emailErrorToHttpException } from './interceptors/email-error.mapping.js';
export { EMAIL_HTTP_MESSAGES } from './interceptors/email-error.messages.js';
export {
  EMAIL_ERROR_INTERCEPTOR_OPTIONS,
  type EmailErrorInterceptorOptions,
} from './interceptors/email-error.options.js';
export { EmailHttpException } from './interceptors/email-http.exception.js';
export { emailValidationExceptionFactory } from './interceptors/validation-pipe.mapping.js';

// Health
export { EmailHealthIndicator } from './health/email.health.js';
export type {
  EmailHealthCheckOptions,
  EmailHealthDown,
  EmailHealthReason,
  EmailHealthResult,
  EmailHealthUp,
} from './health/email-health.interface.js';

// Tracing (no-op unless @opentelemetry/api is installed)
export {
  captureEmailTraceContext,
  runInEmailTraceContext,
  type EmailTraceContext,
} from './telemetry/trace-context.helpers.js';

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

import * as root from '../../lib/index.js';
import * as testing from '../../lib/testing/index.js';

// The package's exported runtime names, exactly. A change here is a change of the public API:
// add a name deliberately (with JSDoc and a CHANGELOG line), never by re-exporting a whole folder.
describe('public surface', () => {
  it("'nestjs-transactional-email' exports exactly these names", () => {
    expect(Object.keys(root).sort()).toEqual([
      'AttachmentDto',
      'BatchEmailItemDto',
      'EMAIL_ENV_VARIABLES',
      'EMAIL_ERROR_INTERCEPTOR_OPTIONS',
      'EMAIL_HEALTH_TIMEOUT_MS',
      'EMAIL_HTTP_MESSAGES',
      'EmailAbortError',
      'EmailApiError',
      'EmailAuthenticationError',
      'EmailBadRequestError',
      'EmailBatchUncertainError',
      'EmailConflictError',
      'EmailConnectionError',
      'EmailContentDto',
      'EmailEnvError',
      'EmailError',
      'EmailErrorInterceptor',
      'EmailForbiddenError',
      'EmailHealthIndicator',
      'EmailHttpException',
      'EmailModule',
      'EmailNotFoundError',
      'EmailOptionsError',
      'EmailProviderError',
      'EmailRateLimitError',
      'EmailRule',
      'EmailSendUncertainError',
      'EmailServerError',
      'EmailService',
      'EmailTimeoutError',
      'EmailUnavailableError',
      'EmailUnexpectedResponseError',
      'EmailValidationError',
      'FIND_SENT_SKEW_MS',
      'IDEMPOTENCY_KEY_PATTERN',
      'InjectEmailHealthIndicator',
      'InjectEmailService',
      'IsEmailAddress',
      'MAX_ADDRESS_LENGTH',
      'MAX_ATTACHMENTS',
      'MAX_ATTACHMENT_TOTAL_BYTES',
      'MAX_BATCH_ITEMS',
      'MAX_DOMAIN_LABEL_LENGTH',
      'MAX_FILENAME_LENGTH',
      'MAX_LOCAL_PART_LENGTH',
      'MAX_RECIPIENTS',
      'MAX_SCHEDULE_AHEAD_MS',
      'MIN_BATCH_ITEMS',
      'MIN_RECIPIENTS',
      'NOT_IN_BATCH_FIELDS',
      'PACKAGE_VERSION',
      'SendEmailDto',
      'UNSUPPORTED_ATTACHMENT_FIELDS',
      'UNSUPPORTED_EMAIL_FIELDS',
      'attachmentFromBuffer',
      'attachmentFromFile',
      'base64DecodedLength',
      'captureEmailTraceContext',
      'createEmailConfig',
      'defineEmailTemplates',
      'emailConfig',
      'emailErrorToHttpException',
      'emailValidationExceptionFactory',
      'generateIdempotencyKey',
      'getEmailHealthIndicatorToken',
      'getEmailServiceToken',
      'isEmailAddress',
      'isValidIdempotencyKey',
      'parseEmailEnv',
      'retryAfterSeconds',
      'runInEmailTraceContext',
      'scheduleAt',
      'scheduleIn',
      'validateBatchItems',
      'validateEmailInput',
    ]);
  });

  it("'nestjs-transactional-email/testing' exports exactly these names", () => {
    expect(Object.keys(testing).sort()).toEqual([
      'EmailSandbox',
      'SAMPLE_TEMPLATE',
      'SandboxClock',
      'SandboxFaults',
      'generateSandboxKey',
      'seededRandom',
    ]);
  });

  it('no exported token resolves to the module options that hold the raw API key', () => {
    expect(Object.keys(root)).not.toContain('EMAIL_MODULE_OPTIONS');
  });
});

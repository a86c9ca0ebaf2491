export { AttachmentDto } from './attachment.dto.js';
export { attachmentFromBuffer, attachmentFromFile } from './attachment.helpers.js';
export { BatchEmailItemDto } from './batch-email-item.dto.js';
export { base64DecodedLength } from './base64.rules.js';
export { EmailContentDto } from './email-content.dto.js';
export { isEmailAddress, IsEmailAddress } from './email-address.decorator.js';
export { validateBatchItems, validateEmailInput, type ValidateOptions } from './email-input.validator.js';
export { EmailRule, type EmailRuleName } from './email-rule.decorator.js';
export * from './email-rules.constants.js';
export { scheduleAt, scheduleIn, type ScheduleOptions } from './schedule.helpers.js';
export { SendEmailDto } from './send-email.dto.js';
export {
  UNSUPPORTED_ATTACHMENT_FIELDS,
  UNSUPPORTED_EMAIL_FIELDS,
  NOT_IN_BATCH_FIELDS,
} from './unsupported-fields.rules.js';

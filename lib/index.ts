export { EmailModule } from './email.module.js';
export { EMAIL_MODULE_OPTIONS, type EmailModuleExtras } from './email.module-definition.js';
export { EmailService } from './email.service.js';
export { PACKAGE_VERSION } from './email.constants.js';
export * from './errors/index.js';
export type * from './interfaces/index.js';
export { IDEMPOTENCY_KEY_PATTERN, generateIdempotencyKey, isValidIdempotencyKey } from './delivery/idempotency-key.js';

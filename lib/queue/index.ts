export { EmailQueueModule } from './email-queue.module.js';
export { EmailQueue } from './email-queue.service.js';
export { EmailQueueHealthIndicator } from './email-queue.health.js';
export { idempotencyKeyFrom } from '../jobs/job-idempotency.rules.js';
export { rebuildJobError, type StoredJobError } from '../jobs/job-error.codec.js';
export { EMAIL_QUEUE_OPTIONS } from './email-queue.constants.js';
export type * from './email-queue.options.js';
export type * from './email-queue.interface.js';
export type { EmailQueueModuleExtras } from './email-queue.module-definition.js';

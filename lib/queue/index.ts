export { EmailQueueModule } from './email-queue.module.js';
export { EmailQueue } from './email-queue.service.js';
export { EmailQueueWorker } from './email-queue.worker.js';
export { EmailQueueHealthIndicator } from './email-queue.health.js';
export { idempotencyKeyFrom } from '../jobs/job-identity.helpers.js';
export { rebuildJobError } from '../jobs/job-error.parser.js';
export type {
  EmailQueueAsyncOptions,
  EmailQueueBackoff,
  EmailQueueConnection,
  EmailQueueOptions,
  EmailQueueOptionsFactory,
  EmailQueueWorkerOptions,
  ResolvedEmailQueueOptions,
} from './email-queue.options.js';
export type * from './email-queue.interface.js';
export type * from '../interfaces/email-job.interface.js';
export type { EmailJobBackoff, EmailJobOptions, ResolvedEmailJobOptions } from '../jobs/email-job.options.js';
export type { EmailQueueModuleExtras } from './email-queue.module-definition.js';
export { EmailQueueUnavailableError } from '../errors/email-queue.error.js';
export { EmailJobCancelledError, EmailJobConflictError } from '../errors/email-job.error.js';

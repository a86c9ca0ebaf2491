export * from './email.error.js';
export * from './email-api.error.js';
export * from './email-transport.error.js';
export * from './email-validation.error.js';
export * from './email-send-uncertain.error.js';
export * from './email-options.error.js';
export * from './email-batch-uncertain.error.js';
export * from './email-queue.error.js';

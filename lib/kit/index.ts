/**
 * `nestjs-transactional-email/testing`: the sandbox (a local emulator of the Transactional Email
 * Service with mailboxes, a movable clock and fault injection), the matchers and helpers, and
 * `EmailTestingModule` for Nest tests.
 */
export * from '../testing/index.js';
export { EmailTestingModule } from './email-testing.module.js';
export type { EmailTestingModuleOptions } from './email-testing.options.js';
export { SandboxAccounts } from './sandbox-accounts.service.js';

/**
 * `nestjs-transactional-email/testing`: the EmailSandbox (a local emulator of the Transactional Email
 * Service with a movable clock and fault injection) and its types.
 */
export { EmailSandbox } from './email-sandbox.js';
export { SandboxMailbox, type SandboxSentMessage } from './sandbox.mailbox.js';
export type { SandboxBounce, SandboxBounceStatus } from './sandbox.bounces.js';
export type {
  SandboxAsymmetricMatch,
  SandboxLinkMatch,
  SandboxMessageMatch,
  SandboxTextMatch,
} from './sandbox.match.js';
export { emailMatchers, type EmailMatchers, type SandboxMessageSource } from './sandbox.matchers.js';
export { RemoteSandboxMailbox } from './sandbox.remote.js';
export {
  codeIn,
  lastMessageTo,
  linkIn,
  linksIn,
  waitForCode,
  waitForLink,
  waitForMessage,
  type SandboxWaitOptions,
} from './sandbox.wait.js';
export {
  codesIn,
  linksOf,
  type SandboxBodies,
  type SandboxCodeOptions,
  type SandboxLink,
} from './sandbox.links.js';
export { clickLink, type SandboxClick, type SandboxClickOptions } from './sandbox.click.js';
export { SandboxClock, type SandboxClockOptions } from './sandbox.clock.js';
export type { SandboxLimitCounts } from './sandbox.core.js';
export { SandboxFaults, type SandboxActiveFault } from './sandbox.faults.js';
export type {
  SandboxFault,
  SandboxFaultHandle,
  SandboxFaultMode,
  SandboxFaultRule,
  SandboxFaultTarget,
  SandboxRandomFaults,
  SandboxRoute,
} from './sandbox.fault.types.js';
export {
  SAMPLE_TEMPLATE,
  generateSandboxKey,
  type SandboxIdempotencyScope,
  type SandboxKeyOptions,
  type SandboxMailboxOptions,
  type SandboxOptions,
  type SandboxPlan,
  type SandboxQuotaOptions,
  type SandboxRateLimitOptions,
  type SandboxTemplate,
  type SandboxTrackingDefaults,
} from './sandbox.options.js';
export type { SandboxEmailDetail, SandboxEmailEvent, SandboxEmailLog } from './sandbox.records.js';
export type { SandboxRequestRecord } from './sandbox.requests.js';
export { seededRandom } from './sandbox.random.js';

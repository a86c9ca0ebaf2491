/**
 * `nestjs-transactional-email/testing`: the EmailSandbox (a local emulator of the Transactional Email
 * Service with a movable clock and fault injection) and its types.
 */
export { EmailSandbox } from './email-sandbox.js';
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
  type SandboxKeyOptions,
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

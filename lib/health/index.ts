export { EMAIL_HEALTH_TIMEOUT_MS, EmailHealthIndicator } from './email.health.js';
export type {
  EmailHealthCheckOptions,
  EmailHealthDown,
  EmailHealthReason,
  EmailHealthResult,
  EmailHealthUp,
} from './email-health.interface.js';

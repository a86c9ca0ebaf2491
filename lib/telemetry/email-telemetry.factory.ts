import { EmailTelemetry } from './email.telemetry.js';
import { loadOtelApi } from './otel-api.loader.js';

/**
 * The telemetry of one module instance: null when `enabled` is false or `@opentelemetry/api` is not
 * installed (then nothing is traced and nothing is imported). With the API installed but no SDK
 * registered, the API's own no-op tracer and meter are used.
 */
export async function createEmailTelemetry(
  enabled: boolean,
  version: string,
): Promise<EmailTelemetry | null> {
  if (!enabled) return null;
  const api = await loadOtelApi();
  return api === null ? null : new EmailTelemetry(api, version);
}

import type { Provider } from '@nestjs/common';
import {
  EMAIL_DELIVERY_OBSERVER,
  EMAIL_RESOLVED_OPTIONS,
  PACKAGE_VERSION,
} from './config/email.constants.js';
import { LoggingDeliveryObserver, type DeliveryObserver } from './delivery/delivery.observer.js';
import type { ResolvedEmailOptions } from './interfaces/email-module-options.interface.js';
import { EMAIL_TELEMETRY } from './telemetry/email-telemetry.constants.js';
import { createEmailTelemetry } from './telemetry/email-telemetry.factory.js';
import type { EmailTelemetry } from './telemetry/email.telemetry.js';

/** Tells every observer each event; one observer's failure never reaches the request loop. */
function allOf(observers: DeliveryObserver[]): DeliveryObserver {
  return {
    attempt: (event) => {
      for (const o of observers) safely(() => o.attempt(event));
    },
    reconcile: (event) => {
      for (const o of observers) safely(() => o.reconcile(event));
    },
    outcome: (event) => {
      for (const o of observers) safely(() => o.outcome(event));
    },
  };
}

function safely(fn: () => void): void {
  try {
    fn();
  } catch {
    // Observers must not throw; a faulty one must not change a call's outcome.
  }
}

/**
 * Telemetry (spans and metrics when `@opentelemetry/api` is installed and `telemetry` is not false)
 * and the delivery observer of one module instance: the logging default, plus telemetry when on.
 */
export const emailTelemetryProviders: Provider[] = [
  {
    provide: EMAIL_TELEMETRY,
    useFactory: (resolved: ResolvedEmailOptions) => createEmailTelemetry(resolved.telemetry, PACKAGE_VERSION),
    inject: [EMAIL_RESOLVED_OPTIONS],
  },
  {
    provide: EMAIL_DELIVERY_OBSERVER,
    useFactory: (resolved: ResolvedEmailOptions, telemetry: EmailTelemetry | null) => {
      const logging = new LoggingDeliveryObserver(resolved.logger);
      return telemetry === null ? logging : allOf([logging, telemetry]);
    },
    inject: [EMAIL_RESOLVED_OPTIONS, EMAIL_TELEMETRY],
  },
];

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
  const each = (fn: (o: DeliveryObserver) => void): void => {
    for (const o of observers) {
      try {
        fn(o);
      } catch {
        // Observers must not throw; a faulty one must not change a call's outcome.
      }
    }
  };
  return {
    attempt: (event) => each((o) => o.attempt(event)),
    reconcile: (event) => each((o) => o.reconcile(event)),
    outcome: (event) => each((o) => o.outcome(event)),
  };
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

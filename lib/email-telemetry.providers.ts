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

/** `observer` with each call in a try/catch: observers must not throw, and a faulty one changes nothing. */
function guarded(observer: DeliveryObserver): DeliveryObserver {
  return {
    attempt(event) {
      try {
        observer.attempt(event);
      } catch {
        // ignored: a call's outcome never depends on an observer
      }
    },
    reconcile(event) {
      try {
        observer.reconcile(event);
      } catch {
        // ignored
      }
    },
    outcome(event) {
      try {
        observer.outcome(event);
      } catch {
        // ignored
      }
    },
  };
}

/** Tells every observer each event (none: a no-op; one: that one), each guarded. */
function allOf(observers: DeliveryObserver[]): DeliveryObserver {
  const each = observers.map(guarded);
  if (each.length === 1) return each[0];
  return {
    attempt(event) {
      for (const o of each) o.attempt(event);
    },
    reconcile(event) {
      for (const o of each) o.reconcile(event);
    },
    outcome(event) {
      for (const o of each) o.outcome(event);
    },
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
      const observers: DeliveryObserver[] = [];
      if (resolved.logger !== false) observers.push(new LoggingDeliveryObserver(resolved.logger));
      if (telemetry !== null) observers.push(telemetry);
      return allOf(observers);
    },
    inject: [EMAIL_RESOLVED_OPTIONS, EMAIL_TELEMETRY],
  },
];

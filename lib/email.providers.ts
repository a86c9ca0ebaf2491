import type { Provider } from '@nestjs/common';
import { resolveEmailOptions } from './config/email-options.resolver.js';
import { apiKeyOf } from './config/secret-safe.options.js';
import {
  EMAIL_API_CLIENT,
  EMAIL_CLAIMED_RECORDS,
  EMAIL_DELIVERY_OBSERVER,
  EMAIL_IDENTICAL_SENDS,
  EMAIL_RATE_LIMITER,
  EMAIL_REQUEST_ENGINE,
  EMAIL_RESOLVED_OPTIONS,
  EMAIL_TRANSPORT,
} from './config/email.constants.js';
import { ClaimedRecords } from './delivery/claimed-records.store.js';
import { IdenticalSends } from './delivery/identical-sends.store.js';
import type { DeliveryObserver } from './delivery/delivery.observer.js';
import { connectRateRedis } from './delivery/rate-limit-redis.helpers.js';
import { RequestEngine } from './delivery/request.engine.js';
import { SendRateLimiter } from './delivery/rate-limit.store.js';
import { emailTelemetryProviders } from './email-telemetry.providers.js';
import { EMAIL_MODULE_OPTIONS } from './email.module-definition.js';
import { EmailApiClient } from './http/email-api.client.js';
import { EmailTransport } from './http/email-transport.client.js';
import { secretRedactor } from './http/secret-redaction.helpers.js';
import { Clock, RealClock } from './policy/delivery.policy.js';
import type {
  EmailModuleOptions,
  ResolvedEmailOptions,
} from './interfaces/email-module-options.interface.js';

const API_KEY = Symbol('nestjs-transactional-email:api-key');

/** The internal providers of one module instance. */
export const emailProviders: Provider[] = [
  {
    provide: EMAIL_RESOLVED_OPTIONS,
    useFactory: (options: EmailModuleOptions) => resolveEmailOptions(options),
    inject: [EMAIL_MODULE_OPTIONS],
  },
  {
    // Read the key once, after the options were checked, into a function rather than a visible value.
    provide: API_KEY,
    useFactory: (options: EmailModuleOptions) => {
      const key = apiKeyOf(options) as string;
      return () => key;
    },
    inject: [EMAIL_MODULE_OPTIONS, EMAIL_RESOLVED_OPTIONS],
  },
  {
    provide: EMAIL_TRANSPORT,
    useFactory: (resolved: ResolvedEmailOptions, key: () => string) => new EmailTransport(resolved, key()),
    inject: [EMAIL_RESOLVED_OPTIONS, API_KEY],
  },
  ...emailTelemetryProviders,
  {
    provide: EMAIL_API_CLIENT,
    useFactory: (transport: EmailTransport, key: () => string) =>
      new EmailApiClient(transport, secretRedactor(key())),
    inject: [EMAIL_TRANSPORT, API_KEY],
  },
  // Time and waits of the instance (backoff, Retry-After, rate-limit windows): a provider by class, so
  // that a spec replaces it with Test.createTestingModule(...).overrideProvider(Clock).useValue(clock).
  { provide: Clock, useClass: RealClock },
  // Long-lived state of the instance: records its sends returned, its open identical sends, its loop.
  { provide: EMAIL_CLAIMED_RECORDS, useFactory: () => new ClaimedRecords() },
  { provide: EMAIL_IDENTICAL_SENDS, useFactory: () => new IdenticalSends() },
  {
    // A Redis that does not answer fails the boot here, naming rateLimit.redis.
    provide: EMAIL_RATE_LIMITER,
    useFactory: async (resolved: ResolvedEmailOptions, clock: Clock) => {
      const options = resolved.rateLimit;
      if (options === undefined) return null;
      const redis = options.redis === undefined ? undefined : await connectRateRedis(options.redis);
      return new SendRateLimiter(options, redis, clock);
    },
    inject: [EMAIL_RESOLVED_OPTIONS, Clock],
  },
  {
    provide: EMAIL_REQUEST_ENGINE,
    useFactory: (
      api: EmailApiClient,
      observer: DeliveryObserver,
      claimed: ClaimedRecords,
      identical: IdenticalSends,
      rate: SendRateLimiter | null,
      clock: Clock,
    ) => new RequestEngine(api, observer, claimed, identical, rate, clock),
    inject: [
      EMAIL_API_CLIENT,
      EMAIL_DELIVERY_OBSERVER,
      EMAIL_CLAIMED_RECORDS,
      EMAIL_IDENTICAL_SENDS,
      EMAIL_RATE_LIMITER,
      Clock,
    ],
  },
];

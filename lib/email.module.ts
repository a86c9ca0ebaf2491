import { Inject, Module, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { accountResolverOf } from './config/email-account.options.js';
import { RATE_LIMIT_DEFAULT_PREFIX } from './config/rate-limit.options.js';
import { AccountDesk, EmailAccounts } from './delivery/email-accounts.store.js';
import { PACKAGE_VERSION } from './config/email.constants.js';
import { EmailResolvedOptions, resolveEmailOptions } from './config/email.options.js';
import { apiKeyOf } from './config/secret-safe.options.js';
import { ClaimedRecords } from './delivery/claimed-records.store.js';
import { IdenticalSends } from './delivery/identical-sends.store.js';
import { connectRateRedis } from './delivery/rate-limit-redis.helpers.js';
import { RequestEngine } from './delivery/request.engine.js';
import { SendRateLimiter } from './delivery/rate-limit.store.js';
import {
  EMAIL_MODULE_OPTIONS,
  EmailConfigurableModule,
  getEmailHealthIndicatorToken,
  getEmailServiceToken,
} from './email.module-definition.js';
import { EmailHealthIndicator } from './health/email.health.js';
import { EmailApiClient } from './http/email-api.client.js';
import { EmailTransport } from './http/email-transport.client.js';
import { secretRedactor } from './http/secret-redaction.helpers.js';
import { Clock, RealClock } from './time/clock.helpers.js';
import type {
  EmailModuleOptions,
  ResolvedEmailOptions,
} from './interfaces/email-module-options.interface.js';
import { EmailService } from './service/email.service.js';
import { EmailSuppressions } from './suppression/email-suppressions.service.js';
import { SuppressionGate } from './suppression/suppression.engine.js';
import { createSuppressionGate } from './suppression/suppression-stores.helpers.js';
import { allObservers, DeliveryObserver, LoggingDeliveryObserver } from './telemetry/delivery.telemetry.js';
import { createEmailTelemetry } from './telemetry/email.telemetry.js';

/**
 * The key of checked options, read where it is used (the transport, the redactor), never kept in sight.
 * Empty without one (`accounts` only): the module's own desk then does not exist.
 */
const keyOf = (options: EmailModuleOptions): string => (apiKeyOf(options) as string | undefined) ?? '';

/**
 * The providers of one instance, each under its class. Options are checked first (every other
 * provider depends on `EmailResolvedOptions`); the loop, the records it returned (`ClaimedRecords`)
 * and its open identical sends (`IdenticalSends`) are the instance's own.
 */
const providers: Provider[] = [
  { provide: EmailResolvedOptions, useFactory: resolveEmailOptions, inject: [EMAIL_MODULE_OPTIONS] },
  {
    provide: EmailTransport,
    useFactory: (resolved: ResolvedEmailOptions, options: EmailModuleOptions) =>
      new EmailTransport(resolved, keyOf(options)),
    inject: [EmailResolvedOptions, EMAIL_MODULE_OPTIONS],
  },
  {
    provide: EmailApiClient,
    useFactory: (transport: EmailTransport, options: EmailModuleOptions) =>
      new EmailApiClient(transport, secretRedactor(keyOf(options))),
    inject: [EmailTransport, EMAIL_MODULE_OPTIONS],
  },
  {
    // The logging observer, plus spans and metrics when `telemetry` is on and @opentelemetry/api installed.
    provide: DeliveryObserver,
    useFactory: async (resolved: ResolvedEmailOptions) => {
      const telemetry = await createEmailTelemetry(resolved.telemetry, PACKAGE_VERSION);
      const logging = resolved.logger === false ? [] : [new LoggingDeliveryObserver(resolved.logger)];
      return allObservers(telemetry === null ? logging : [...logging, telemetry]);
    },
    inject: [EmailResolvedOptions],
  },
  // Time and waits of the instance (backoff, Retry-After, rate-limit windows): a spec replaces it with
  // Test.createTestingModule(...).overrideProvider(Clock).useValue(clock).
  { provide: Clock, useClass: RealClock },
  { provide: ClaimedRecords, useFactory: () => new ClaimedRecords() },
  { provide: IdenticalSends, useFactory: () => new IdenticalSends() },
  {
    // Null without `rateLimit`. A Redis that does not answer fails the boot here, naming rateLimit.redis.
    provide: SendRateLimiter,
    useFactory: async ({ rateLimit }: ResolvedEmailOptions, clock: Clock) => {
      if (rateLimit === undefined) return null;
      const redis = rateLimit.redis === undefined ? undefined : await connectRateRedis(rateLimit.redis);
      return new SendRateLimiter(rateLimit, redis, clock);
    },
    inject: [EmailResolvedOptions, Clock],
  },
  {
    provide: RequestEngine,
    useFactory: (
      api: EmailApiClient,
      observer: DeliveryObserver,
      claimed: ClaimedRecords,
      identical: IdenticalSends,
      rate: SendRateLimiter | null,
      clock: Clock,
    ) => new RequestEngine(api, observer, claimed, identical, rate, clock),
    inject: [EmailApiClient, DeliveryObserver, ClaimedRecords, IdenticalSends, SendRateLimiter, Clock],
  },
  {
    // The module's own account (its apiKey, when given) and the accounts its resolver finds at run time.
    provide: EmailAccounts,
    useFactory: async (
      resolved: ResolvedEmailOptions,
      options: EmailModuleOptions,
      transport: EmailTransport,
      engine: RequestEngine,
      observer: DeliveryObserver,
      clock: Clock,
      rate: SendRateLimiter | null,
      moduleRef: ModuleRef,
    ) => {
      const key = keyOf(options);
      const recipientsLimit = resolved.rateLimit?.recipients?.limit;
      const own = resolved.hasApiKey
        ? new AccountDesk(undefined, resolved, engine, rate, key, recipientsLimit)
        : null;
      const resolver = await accountResolverOf(resolved.accounts, moduleRef);
      return new EmailAccounts(resolved, resolver, own, {
        observer,
        clock,
        moduleRate: rate,
        rateRedis: rate?.sharedRedis ?? null,
        ratePrefix: resolved.rateLimit?.prefix ?? RATE_LIMIT_DEFAULT_PREFIX,
        transport,
        allowInsecureHttp: options.allowInsecureHttp === true,
      });
    },
    inject: [
      EmailResolvedOptions,
      EMAIL_MODULE_OPTIONS,
      EmailTransport,
      RequestEngine,
      DeliveryObserver,
      Clock,
      SendRateLimiter,
      ModuleRef,
    ],
  },
  {
    // The suppression list (in the rateLimit Redis unless `suppression` names its store); loaded by
    // EmailSuppressions at init, where a store that does not answer fails the boot.
    provide: SuppressionGate,
    useFactory: (resolved: ResolvedEmailOptions, rate: SendRateLimiter | null, observer: DeliveryObserver) =>
      createSuppressionGate(resolved, rate?.sharedRedis?.client, observer),
    inject: [EmailResolvedOptions, SendRateLimiter, DeliveryObserver],
  },
  EmailSuppressions,
  EmailService,
  EmailHealthIndicator,
];

/**
 * Registers `EmailService` (and `EmailHealthIndicator`) for the service at `baseUrl`. Options are
 * checked at boot. Give `name` to register one more instance beside the default one.
 *
 * @example
 * EmailModule.forRoot({ apiKey: process.env.EMAIL_API_KEY!, baseUrl: 'https://mail.example.com' })
 * EmailModule.forRootAsync({
 *   imports: [ConfigModule.forFeature(emailConfig)],
 *   inject: [emailConfig.KEY],
 *   useFactory: (config: ConfigType<typeof emailConfig>) => config,
 *   isGlobal: true,
 * })
 * EmailModule.forRoot({ name: 'marketing', apiKey: process.env.MARKETING_EMAIL_API_KEY!, baseUrl })
 */
@Module({ providers }) // exports depend on the instance's `name`: see email.module-definition.ts
/** @publicApi */
export class EmailModule extends EmailConfigurableModule implements OnApplicationShutdown {
  constructor(
    @Inject(EmailTransport) private readonly transport: EmailTransport,
    @Inject(SendRateLimiter) private readonly rate: SendRateLimiter | null,
    @Inject(EmailAccounts) private readonly accounts: EmailAccounts,
  ) {
    super();
  }

  /**
   * Closes the connection pools (the module's, and those opened for accounts on other base URLs) and the
   * limiter's own Redis connection when the application shuts down.
   */
  async onApplicationShutdown(): Promise<void> {
    await Promise.all([this.transport.close(), this.accounts.close(), this.rate?.close()]);
  }
}

/**
 * Injects the `EmailService` of the `EmailModule` instance registered with `forRoot({ name })`.
 * Without a name it injects the default instance, like a plain `EmailService` parameter.
 *
 * @example
 * constructor(
 *   private readonly email: EmailService,                                  // default instance
 *   @InjectEmailService('marketing') private readonly marketing: EmailService,
 * ) {}
 * @publicApi
 */
export function InjectEmailService(name?: string): PropertyDecorator & ParameterDecorator {
  return Inject(getEmailServiceToken(name));
}

/**
 * Injects the `EmailHealthIndicator` bound to the `EmailModule` instance registered with `forRoot({ name })`.
 *
 * @example
 * constructor(@InjectEmailHealthIndicator('marketing') private readonly marketing: EmailHealthIndicator) {}
 * @publicApi
 */
export function InjectEmailHealthIndicator(name?: string): PropertyDecorator & ParameterDecorator {
  return Inject(getEmailHealthIndicatorToken(name));
}

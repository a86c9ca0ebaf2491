import { Inject, Module, type OnApplicationShutdown, type OnModuleInit, type Provider } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { PACKAGE_VERSION } from './config/email.constants.js';
import { EmailResolvedOptions, loggerOf, resolveEmailOptions, telemetryOn } from './config/email.options.js';
import { EmailAccounts } from './delivery/email-accounts.store.js';
import {
  EMAIL_MODULE_OPTIONS,
  EmailConfigurableModule,
  getEmailHealthIndicatorToken,
  getEmailServiceToken,
} from './email.module-definition.js';
import { EmailHealthIndicator } from './health/email.health.js';
import type { EmailModuleOptions } from './interfaces/email-module-options.interface.js';
import { EmailService } from './service/email.service.js';
import { EmailSuppressions } from './suppression/email-suppressions.service.js';
import { allObservers, DeliveryObserver, LoggingDeliveryObserver } from './telemetry/delivery.telemetry.js';
import { createEmailTelemetry } from './telemetry/email.telemetry.js';
import { Clock, RealClock } from './time/clock.helpers.js';

/**
 * The logging observer, plus spans and metrics when `telemetry` is on and @opentelemetry/api is installed.
 * Read from the options as given (`EmailResolvedOptions`, made beside it, checks them and fails the boot).
 */
async function observerOf(options: EmailModuleOptions): Promise<DeliveryObserver> {
  const telemetry = await createEmailTelemetry(telemetryOn(options), PACKAGE_VERSION);
  const logger = loggerOf(options);
  const logging = logger === false ? [] : [new LoggingDeliveryObserver(logger)];
  return allObservers(telemetry === null ? logging : [...logging, telemetry]);
}

/**
 * The providers of one instance, at most three steps from its options: the checked options, the
 * delivery observer and the clock; the accounts (every desk: the module's own key and each account's,
 * built one way by `DeskBuilder`, with the limiter and its Redis); the service and its health indicator.
 * A spec replaces the clock or the observer as any Nest provider:
 * `Test.createTestingModule(...).overrideProvider(Clock).useValue(clock)`.
 */
const providers: Provider[] = [
  { provide: EmailResolvedOptions, useFactory: resolveEmailOptions, inject: [EMAIL_MODULE_OPTIONS] },
  { provide: DeliveryObserver, useFactory: observerOf, inject: [EMAIL_MODULE_OPTIONS] },
  { provide: Clock, useClass: RealClock },
  {
    // A Redis that does not answer fails the boot here, naming rateLimit.redis.
    provide: EmailAccounts,
    useFactory: EmailAccounts.open,
    inject: [EMAIL_MODULE_OPTIONS, EmailResolvedOptions, DeliveryObserver, Clock, ModuleRef],
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
export class EmailModule extends EmailConfigurableModule implements OnModuleInit, OnApplicationShutdown {
  constructor(@Inject(EmailAccounts) private readonly accounts: EmailAccounts) {
    super();
  }

  /**
   * Connects the limiter's own Redis (`rateLimit.redis`) and checks that it answers: a Redis that is down fails
   * the boot here. Nothing connects while Nest builds the app, so a boot that fails on another provider leaves
   * no connection behind.
   */
  async onModuleInit(): Promise<void> {
    await this.accounts.check();
  }

  /**
   * Closes the connection pools (the module's, and those opened for accounts on other base URLs) and the
   * limiter's own Redis connection when the application shuts down.
   */
  async onApplicationShutdown(): Promise<void> {
    await this.accounts.close();
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

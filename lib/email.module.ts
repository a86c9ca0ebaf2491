import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { EMAIL_RATE_LIMITER, EMAIL_TRANSPORT } from './config/email.constants.js';
import type { SendRateLimiter } from './delivery/rate-limit.store.js';
import { EmailConfigurableModule } from './email.module-definition.js';
import { emailProviders } from './email.providers.js';
import { EmailService } from './service/email.service.js';
import { EmailHealthIndicator } from './health/email.health.js';
import type { EmailTransport } from './http/email-transport.client.js';

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
@Module({
  // Exports depend on the instance's `name`: see `withInstanceExports`.
  providers: [...emailProviders, EmailService, EmailHealthIndicator],
})
/** @publicApi */
export class EmailModule extends EmailConfigurableModule implements OnApplicationShutdown {
  constructor(
    @Inject(EMAIL_TRANSPORT) private readonly transport: EmailTransport,
    @Inject(EMAIL_RATE_LIMITER) private readonly rate: SendRateLimiter | null,
  ) {
    super();
  }

  /** Closes the connection pool (and the limiter's own Redis connection) when the application shuts down. */
  async onApplicationShutdown(): Promise<void> {
    await Promise.all([this.transport.close(), this.rate?.close()]);
  }
}

import { Module, ValidationPipe, type DynamicModule } from '@nestjs/common';
import { ConfigModule, type ConfigType } from '@nestjs/config';
import { APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import {
  EmailErrorInterceptor,
  EmailModule,
  emailConfig,
  emailValidationExceptionFactory,
} from 'nestjs-transactional-email';
import type { EmailSandbox } from 'nestjs-transactional-email/testing';
import { EmailsModule } from './emails/emails.module.js';
import { HealthModule } from './health/health.module.js';
import { LOCAL_REDIS, LocalRedisLifecycle } from './redis/local-redis.lifecycle.js';
import type { LocalRedis } from './redis/local-redis.js';
import { LOCAL_SANDBOX, LocalSandboxLifecycle } from './sandbox/local-sandbox.lifecycle.js';
import { NotificationsModule } from './notifications/notifications.module.js';
import { OrdersModule } from './orders/orders.module.js';
import { LOCAL_POSTGRES, LocalPostgresLifecycle } from './postgres/local-postgres.lifecycle.js';
import type { LocalPostgres } from './postgres/local-postgres.js';
import { SandboxFaultsController } from './sandbox/sandbox-faults.controller.js';
import { TenantAccountsModule } from './tenants/tenant-accounts.module.js';
import { TenantAccounts } from './tenants/tenant-accounts.service.js';
import { TenantsModule } from './tenants/tenants.module.js';
import { WelcomeModule } from './welcome/welcome.module.js';

/** Options of the sample's root module. */
export interface AppModuleOptions {
  /** An embedded sandbox the app owns: it is closed when the app shuts down, and `/sandbox` shows it. */
  sandbox?: EmailSandbox | null;
  /** An embedded redis-server the app owns: it is stopped when the app shuts down. */
  redis?: LocalRedis | null;
  /** An embedded PostgreSQL the app owns: it is stopped when the app shuts down. */
  postgres?: LocalPostgres | null;
}

/**
 * The sample's root module: configuration from the environment (`EMAIL_API_KEY`, `EMAIL_BASE_URL`, ...
 * through `emailConfig`), the email module registered once and globally, DTO validation for every
 * request body and the email error interceptor for every route. With an embedded sandbox it also serves
 * `/sandbox` to look at it and script its faults.
 *
 * The email module sends for the app itself with `EMAIL_API_KEY`, and for each tenant with the tenant's own
 * key: `accounts` is the resolver that finds it (`TenantAccounts`, reading the tenants table).
 */
@Module({})
export class AppModule {
  static register(options: AppModuleOptions = {}): DynamicModule {
    // One tenants table for the resolver and the tenants' routes (a mailbox each in the embedded sandbox).
    const tenantAccounts = TenantAccountsModule.register(options.sandbox ?? null);
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot({ isGlobal: true }),
        EmailModule.forRootAsync({
          isGlobal: true,
          imports: [ConfigModule.forFeature(emailConfig), tenantAccounts],
          inject: [emailConfig.KEY, TenantAccounts],
          // EMAIL_* from the environment, plus the resolver: a call with { account } sends with that tenant's key
          useFactory: (config: ConfigType<typeof emailConfig>, accounts: TenantAccounts) => ({
            ...config,
            accounts,
          }),
        }),
        EmailsModule,
        NotificationsModule,
        HealthModule,
        WelcomeModule,
        TenantsModule.register(tenantAccounts, { sandbox: Boolean(options.sandbox) }),
        // Orders + their confirmation in one transaction (EmailOutbox): only with a database to write to.
        ...(process.env.DATABASE_URL ? [OrdersModule] : []),
      ],
      controllers: options.sandbox ? [SandboxFaultsController] : [],
      providers: [
        { provide: LOCAL_SANDBOX, useValue: options.sandbox ?? null },
        LocalSandboxLifecycle,
        { provide: LOCAL_REDIS, useValue: options.redis ?? null },
        LocalRedisLifecycle,
        { provide: LOCAL_POSTGRES, useValue: options.postgres ?? null },
        LocalPostgresLifecycle,
        {
          provide: APP_PIPE,
          useValue: new ValidationPipe({
            whitelist: true,
            forbidNonWhitelisted: true,
            transform: true,
            // one 400 shape: bad DTOs answer like EmailValidationError does through the interceptor
            exceptionFactory: emailValidationExceptionFactory,
          }),
        },
        { provide: APP_INTERCEPTOR, useClass: EmailErrorInterceptor },
      ],
    };
  }
}

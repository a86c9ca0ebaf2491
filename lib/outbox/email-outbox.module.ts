import { Module, type Provider } from '@nestjs/common';
import { EMAIL_OUTBOX_RAW_OPTIONS, EmailOutboxConfigurableModule } from './email-outbox.module-definition.js';
import {
  type EmailOutboxOptions,
  EmailOutboxResolvedOptions,
  resolveEmailOutboxOptions,
} from './email-outbox.options.js';
import { EmailOutbox } from './email-outbox.service.js';
import { OutboxBoss } from './outbox-boss.store.js';
import { PgBossBackend } from './pgboss.backend.js';
import { EmailOutboxWorker } from './email-outbox.worker.js';
import { EmailOutboxHealthIndicator } from './email-outbox.health.js';

/** Checked options: a bad one fails the boot, naming each. */
const resolved: Provider = {
  provide: EmailOutboxResolvedOptions,
  inject: [EMAIL_OUTBOX_RAW_OPTIONS],
  useFactory: (raw: EmailOutboxOptions | undefined) => resolveEmailOutboxOptions(raw),
};

/**
 * Exactly-once email from the app's own PostgreSQL transaction, on pg-boss: registers `EmailOutbox` (and
 * `EmailOutboxHealthIndicator`). Import it beside `EmailModule`; it uses that module's `EmailService` (or
 * the named instance given as `emailService`). Peers: `pg-boss` and `pg`.
 *
 * @example
 * EmailOutboxModule.forRoot({ connection: process.env.DATABASE_URL!, concurrency: 20 })
 * EmailOutboxModule.forRootAsync({ inject: [ConfigService], useFactory: (c: ConfigService) => ({ connection: c.getOrThrow('DATABASE_URL') }) })
 */
@Module({
  providers: [
    resolved,
    OutboxBoss,
    PgBossBackend,
    EmailOutbox,
    EmailOutboxWorker,
    EmailOutboxHealthIndicator,
  ],
  exports: [EmailOutbox, EmailOutboxWorker, EmailOutboxHealthIndicator],
})
/** @publicApi */
export class EmailOutboxModule extends EmailOutboxConfigurableModule {}

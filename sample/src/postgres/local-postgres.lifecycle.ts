import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { LocalPostgres } from './local-postgres.js';

/** Token of the embedded PostgreSQL (null when DATABASE_URL points at another server). */
export const LOCAL_POSTGRES = Symbol('LOCAL_POSTGRES');

/** Stops the embedded PostgreSQL, if any, when the app shuts down (after the outbox's own hooks). */
@Injectable()
export class LocalPostgresLifecycle implements OnApplicationShutdown {
  constructor(@Inject(LOCAL_POSTGRES) private readonly postgres: LocalPostgres | null) {}

  async onApplicationShutdown(): Promise<void> {
    if (!this.postgres) return;
    await this.postgres.stop();
    new Logger('Sample').log('Stopped the embedded PostgreSQL');
  }
}

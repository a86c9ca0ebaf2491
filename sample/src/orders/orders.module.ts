import { Inject, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { EmailOutboxModule } from 'nestjs-transactional-email/outbox';
import pg from 'pg';
import { OrdersController } from './orders.controller.js';

/** Token of the app's own pg Pool (the one its orders are written with). */
export const ORDERS_POOL = Symbol('ORDERS_POOL');

/** Creates the orders table at boot and ends the pool at shutdown. */
class OrdersTable implements OnModuleInit, OnApplicationShutdown {
  constructor(@Inject(ORDERS_POOL) private readonly pool: pg.Pool) {}
  async onModuleInit(): Promise<void> {
    await this.pool.query(
      'CREATE TABLE IF NOT EXISTS sample_orders (id serial PRIMARY KEY, email text NOT NULL, item text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())',
    );
  }
  async onApplicationShutdown(): Promise<void> {
    await this.pool.end();
  }
}

/**
 * Orders and their confirmation emails in ONE PostgreSQL transaction, through EmailOutbox (pg-boss): the
 * email is sent exactly once if the order commits, and never if it rolls back. DATABASE_URL (`npm run
 * sample` starts an embedded PostgreSQL when it is unset).
 */
@Module({
  imports: [
    EmailOutboxModule.forRootAsync({
      useFactory: () => ({
        connection: process.env.DATABASE_URL as string,
        schema: 'sample_outbox',
        closeTimeoutMs: 10_000,
      }),
    }),
  ],
  controllers: [OrdersController],
  providers: [
    {
      provide: ORDERS_POOL,
      useFactory: () => new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 5 }),
    },
    OrdersTable,
  ],
})
export class OrdersModule {}

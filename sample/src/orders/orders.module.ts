import { Inject, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { EmailOutboxModule } from 'nestjs-transactional-email/outbox';
import pg from 'pg';
import { ORDERS_POOL } from './orders.constants.js';
import { OrdersController } from './orders.controller.js';

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
      useFactory: () => {
        const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 5 });
        pool.on('error', () => undefined); // an idle connection lost (the server restarting): the next query says so
        return pool;
      },
    },
    OrdersTable,
  ],
})
export class OrdersModule {}

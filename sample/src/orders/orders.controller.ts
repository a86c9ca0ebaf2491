import { Body, Controller, Get, HttpCode, Inject, NotFoundException, Param, Post } from '@nestjs/common';
import { IsEmail, IsString, Length } from 'class-validator';
import { EmailOutbox, type EmailOutboxJobStatus } from 'nestjs-transactional-email/outbox';
import type pg from 'pg';
import { ORDERS_POOL } from './orders.constants.js';

/** A new order. */
export class CreateOrderDto {
  /** Where the confirmation goes. */
  @IsEmail()
  email!: string;

  /** What was ordered. */
  @IsString()
  @Length(1, 200)
  item!: string;
}

/** Places orders: the order row and its confirmation email are written in one transaction. */
@Controller('orders')
export class OrdersController {
  constructor(
    private readonly outbox: EmailOutbox,
    @Inject(ORDERS_POOL) private readonly pool: pg.Pool,
  ) {}

  /** Creates the order and enqueues its confirmation in the same transaction; answers 201 with the job id. */
  @Post()
  async create(@Body() dto: CreateOrderDto): Promise<{ orderId: number; jobId: string }> {
    return this.inTransaction(dto, 'commit');
  }

  /**
   * Does the same, then fails before the commit (a payment declined, say): the transaction rolls back,
   * taking the order AND its email with it. Answers 200 with `{ rolledBack: true, email: null }`.
   */
  @Post('rolled-back')
  @HttpCode(200)
  async createThenRollBack(
    @Body() dto: CreateOrderDto,
  ): Promise<{ rolledBack: true; jobId: string; email: EmailOutboxJobStatus | null }> {
    const { jobId } = await this.inTransaction(dto, 'rollback');
    return { rolledBack: true, jobId, email: await this.outbox.status(jobId) };
  }

  /** Where an order's confirmation is: waiting, active, sent (with the message id) or failed. */
  @Get('emails/:jobId')
  async email(@Param('jobId') jobId: string): Promise<EmailOutboxJobStatus> {
    const status = await this.outbox.status(jobId);
    if (!status) throw new NotFoundException(`no confirmation ${jobId} (never enqueued, or rolled back)`);
    return status;
  }

  private async inTransaction(
    dto: CreateOrderDto,
    end: 'commit' | 'rollback',
  ): Promise<{ orderId: number; jobId: string }> {
    const client = await this.pool.connect();
    // pg-pool stops listening for a client's errors while it is checked out: a connection lost meanwhile (the
    // database restarting) would be an unhandled `error` event, which ends the process. The query fails anyway.
    const lost = (): void => undefined;
    client.on('error', lost);
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<{ id: number }>(
        'INSERT INTO sample_orders (email, item) VALUES ($1, $2) RETURNING id',
        [dto.email, dto.item],
      );
      const orderId = rows[0]!.id;
      const jobId = `order-confirmation:${orderId}${end === 'rollback' ? ':rolled-back' : ''}`;
      await this.outbox.send(
        {
          from: 'Sample Shop <shop@example.com>',
          to: [dto.email],
          subject: `Order ${orderId} confirmed`,
          text: `Thanks for your order of ${dto.item}.`,
        },
        { tx: client, jobId },
      );
      await client.query(end === 'commit' ? 'COMMIT' : 'ROLLBACK');
      return { orderId, jobId };
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.off('error', lost);
      client.release();
    }
  }
}

import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { IsIn, IsOptional, IsString } from 'class-validator';
import {
  EmailSuppressions,
  IsEmailAddress,
  type EmailSuppressionPage,
  type EmailSuppressionReason,
} from 'nestjs-transactional-email';

/** Body of `POST /suppressions`: what an app's handler of the provider's events adds. */
export class SuppressionDto {
  @IsEmailAddress() address!: string;
  @IsIn(['bounced', 'complained', 'unsubscribed', 'manual']) reason!: EmailSuppressionReason;
}

/** Query of `GET /suppressions`. */
export class SuppressionPageQuery {
  /** The `next` of the previous page. */
  @IsOptional() @IsString() after?: string;
}

/**
 * The suppression list of the default account: what the module learned from records that bounced or
 * complained, and what the app adds (an unsubscribe link, a provider's webhook). Sends to these addresses
 * are refused before any request (422 through the interceptor).
 */
@Controller('suppressions')
export class SuppressionsController {
  constructor(private readonly suppressions: EmailSuppressions) {}

  /** A page of the list, in address order; `?after=` the previous page's `next`. */
  @Get()
  list(@Query() query: SuppressionPageQuery): Promise<EmailSuppressionPage> {
    return this.suppressions.list(query.after === undefined ? {} : { after: query.after });
  }

  /** Adds an address (as a webhook of the provider's events would). */
  @Post()
  add(@Body() dto: SuppressionDto): Promise<unknown> {
    return this.suppressions.add(dto.address, { reason: dto.reason });
  }

  /** Takes an address off the list: it is mailed again. */
  @Delete(':address')
  @HttpCode(204)
  async remove(@Param('address') address: string): Promise<void> {
    await this.suppressions.remove(address);
  }
}

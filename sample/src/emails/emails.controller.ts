import {
  BadRequestException,
  Body,
  Controller,
  Get,
  Headers,
  Param,
  ParseArrayPipe,
  ParseIntPipe,
  Post,
  Query,
} from '@nestjs/common';
import {
  ApiBadGatewayResponse,
  ApiBadRequestResponse,
  ApiBody,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiProperty,
} from '@nestjs/swagger';
import {
  BatchEmailItemDto,
  EmailDetailDto,
  EmailErrorResponseDto,
  EmailEventDto,
  EmailLogDto,
  EmailService,
  EmailValidationErrorResponseDto,
  SendEmailDto,
  type EmailDetail,
  type EmailEvent,
  type EmailLog,
} from 'nestjs-transactional-email';

/** What `GET /emails/:id` answers: the record with its bodies, and its events. */
class EmailWithEventsDto extends EmailDetailDto {
  @ApiProperty({ type: [EmailEventDto], description: 'Opens and clicks, newest first.' })
  declare events: EmailEvent[];
}

/**
 * Sends and reads email. Bodies are checked by the package's DTOs (see the global `ValidationPipe` in
 * `AppModule`); errors from the service become HTTP answers through `EmailErrorInterceptor`.
 */
@Controller('emails')
export class EmailsController {
  constructor(private readonly email: EmailService) {}

  /**
   * One email, inline (`subject` + `html`/`text`) or from a template. A client's `Idempotency-Key`
   * header is passed on, so the client can retry this request safely; without one a key is generated.
   */
  @Post()
  @ApiCreatedResponse({ type: EmailLogDto })
  @ApiBadRequestResponse({ type: EmailValidationErrorResponseDto })
  @ApiBadGatewayResponse({ type: EmailErrorResponseDto })
  send(@Body() dto: SendEmailDto, @Headers('idempotency-key') idempotencyKey?: string): Promise<EmailLog> {
    return this.email.send(dto, idempotencyKey ? { idempotencyKey } : {});
  }

  /** One email from a saved template: `templateId` + `variables` (the embedded sandbox has template 1). */
  @Post('template')
  @ApiCreatedResponse({ type: EmailLogDto })
  @ApiBadRequestResponse({ type: EmailValidationErrorResponseDto })
  sendTemplate(@Body() dto: SendEmailDto): Promise<EmailLog> {
    if (dto.templateId === undefined || dto.templateId === null) {
      throw new BadRequestException('templateId is required here; send inline content to POST /emails');
    }
    return this.email.send(dto);
  }

  /** 1 to 100 emails in one request (no attachments, no scheduling). Batches are never retried blindly. */
  @Post('batch')
  @ApiBody({ type: [BatchEmailItemDto] })
  @ApiCreatedResponse({ type: [EmailLogDto] })
  @ApiBadRequestResponse({ type: EmailValidationErrorResponseDto })
  sendBatch(
    @Body(new ParseArrayPipe({ items: BatchEmailItemDto, whitelist: true, forbidNonWhitelisted: true }))
    items: BatchEmailItemDto[],
  ): Promise<EmailLog[]> {
    return this.email.sendBatch(items);
  }

  /** Message records; `?limit=` 1 to 100. */
  @Get()
  @ApiOkResponse({ type: [EmailLogDto] })
  list(@Query('limit', new ParseIntPipe({ optional: true })) limit?: number): Promise<EmailLog[]> {
    return this.email.list(limit === undefined ? {} : { limit });
  }

  /** One message with its bodies and its open/click events (newest first). */
  @Get(':id')
  @ApiOkResponse({ type: EmailWithEventsDto })
  async get(@Param('id', ParseIntPipe) id: number): Promise<EmailDetail & { events: EmailEvent[] }> {
    const [detail, events] = await Promise.all([this.email.get(id), this.email.listEvents(id)]);
    return { ...detail, events };
  }
}

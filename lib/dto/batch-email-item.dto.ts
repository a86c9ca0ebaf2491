import { EmailContentDto } from './email-content.dto.js';
import { EmailRule } from './email-rule.decorator.js';
import { BATCH_ITEM_OPENAPI, type OpenApiMetadata } from './email-openapi.constants.js';

/**
 * One email of a batch, for `ValidationPipe` (e.g. `new ParseArrayPipe({ items: BatchEmailItemDto })`).
 * Same rules as `SendEmailDto`, but `scheduledAt` and `attachments` are refused: batches support neither.
 */
export class BatchEmailItemDto extends EmailContentDto {
  /** OpenAPI metadata that `@nestjs/swagger` reads (see docs/openapi.md). @internal */
  static override _OPENAPI_METADATA_FACTORY = (): OpenApiMetadata => BATCH_ITEM_OPENAPI;

  /** Refused: batches cannot be scheduled. */
  @EmailRule('notInBatch') scheduledAt?: never;
  /** Refused: batches cannot carry attachments. */
  @EmailRule('notInBatch') attachments?: never;
}

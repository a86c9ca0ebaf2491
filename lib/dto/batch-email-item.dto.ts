import { EmailContentDto } from './email-content.dto.js';
import { EmailRule } from './email-rule.decorator.js';

/**
 * One email of a batch, for `ValidationPipe` (e.g. `new ParseArrayPipe({ items: BatchEmailItemDto })`).
 * Same rules as `SendEmailDto`, but `scheduledAt` and `attachments` are refused: batches support neither.
 * @publicApi
 */
export class BatchEmailItemDto extends EmailContentDto {
  /** Refused: batches cannot be scheduled. */
  @EmailRule('notInBatch') scheduledAt?: never;
  /** Refused: batches cannot carry attachments. */
  @EmailRule('notInBatch') attachments?: never;
}

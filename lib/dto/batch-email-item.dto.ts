import { EmailContentDto } from './email-content.dto.js';
import { type RefusedFields, SINGLE_SEND_FIELDS } from './email-fields.constants.js';
import { EmailRule } from './email-rule.decorator.js';
import 'reflect-metadata';
import {
  BATCH_ITEM_OPENAPI,
  BATCH_ITEM_SCHEMA,
  OPENAPI_SCHEMA_METADATA,
  type OpenApiMetadata,
} from './email-openapi.constants.js';

/**
 * One email of a batch, for `ValidationPipe` (e.g. `new ParseArrayPipe({ items: BatchEmailItemDto })`).
 * Same rules as `SendEmailDto`, but `scheduledAt` and `attachments` are refused: batches support neither.
 * @publicApi
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class BatchEmailItemDto extends EmailContentDto {
  /** OpenAPI metadata that `@nestjs/swagger` reads (see docs/openapi.md). @internal */
  static override _OPENAPI_METADATA_FACTORY = (): OpenApiMetadata => BATCH_ITEM_OPENAPI;
}

// `scheduledAt` and `attachments` come from the field table's single-send fields, refused here by name.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type
export interface BatchEmailItemDto extends RefusedFields<typeof SINGLE_SEND_FIELDS> {}
for (const name of Object.keys(SINGLE_SEND_FIELDS))
  EmailRule('notInBatch')(BatchEmailItemDto.prototype, name);
// The schema says "no other properties" and why (see docs/openapi.md); read by @nestjs/swagger.
Reflect.defineMetadata(OPENAPI_SCHEMA_METADATA, [BATCH_ITEM_SCHEMA], BatchEmailItemDto);

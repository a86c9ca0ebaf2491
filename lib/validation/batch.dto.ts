import 'reflect-metadata';
import { EMAIL_CONTENT_OPENAPI, EmailContentDto } from './content.dto.js';
import { NOT_IN_BATCH_FIELDS, UNSUPPORTED_EMAIL_FIELDS } from './content.rules.js';
import { EmailRule } from './email-rule.decorator.js';
import {
  closedSchema,
  listRefused,
  OPENAPI_SCHEMA_METADATA,
  type OpenApiMetadata,
} from './openapi.helpers.js';
import { type RefusedFields, SINGLE_SEND_FIELDS } from './validation.constants.js';

/** `BatchEmailItemDto`: the content fields only; a batch item takes neither scheduling nor attachments. */
export const BATCH_ITEM_OPENAPI: OpenApiMetadata = EMAIL_CONTENT_OPENAPI;

/** Schema-level metadata of `BatchEmailItemDto`. */
export const BATCH_ITEM_SCHEMA = closedSchema(
  'One email of a batch, with the rules of a single send.',
  `a batch item takes no ${listRefused(NOT_IN_BATCH_FIELDS)}`,
  `the service does not support ${listRefused(UNSUPPORTED_EMAIL_FIELDS)}`,
);

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

import {
  MAX_ATTACHMENT_TOTAL_BYTES,
  MAX_ATTACHMENTS,
  MAX_FILENAME_LENGTH,
  MAX_RECIPIENTS,
  MIN_RECIPIENTS,
} from './email-rules.constants.js';
import {
  NOT_IN_BATCH_FIELDS,
  UNSUPPORTED_ATTACHMENT_FIELDS,
  UNSUPPORTED_EMAIL_FIELDS,
} from './unsupported-fields.rules.js';

/**
 * The OpenAPI description of one DTO property, in the form `@nestjs/swagger` reads from a class's static
 * `_OPENAPI_METADATA_FACTORY` (what its CLI plugin generates), so that Swagger documents our DTOs while
 * `@nestjs/swagger` stays out of our dependencies.
 */
export type OpenApiPropertyMetadata = Readonly<Record<string, unknown>> & { required: boolean };

/** The metadata of a DTO class by property name. */
export type OpenApiMetadata = Readonly<Record<string, OpenApiPropertyMetadata>>;

const MIB = (MAX_ATTACHMENT_TOTAL_BYTES / 1024 / 1024).toFixed(1);

/**
 * Where `@nestjs/swagger` reads a class's own schema-level fields (what its `@ApiSchema()` decorator
 * writes); the fields other than `name` are copied onto the schema object. Used, like
 * `_OPENAPI_METADATA_FACTORY`, so that our DTOs document themselves without depending on `@nestjs/swagger`.
 */
export const OPENAPI_SCHEMA_METADATA = 'swagger/apiSchema';

/** Schema-level fields of a DTO: a description, and `additionalProperties: false` (nothing else accepted). */
export interface OpenApiSchemaMetadata {
  readonly description: string;
  readonly additionalProperties: false;
}

/** The refused fields of a table for a description, grouped by meaning: `` `cc` (CC recipients), `raw`, `mime` (raw MIME) ``. */
function listRefused(table: Readonly<Record<string, string>>): string {
  const byMeaning = new Map<string, string[]>();
  for (const [name, what] of Object.entries(table))
    byMeaning.set(what, [...(byMeaning.get(what) ?? []), name]);
  return [...byMeaning]
    .map(([what, names]) => `${names.map((n) => `\`${n}\``).join(', ')} (${what})`)
    .join(', ');
}

/**
 * A DTO's schema-level metadata: what it is, then the fields the service does not support, which are
 * refused with 400 by name (never dropped) and therefore not listed as properties at all.
 */
function closedSchema(what: string, ...refused: string[]): OpenApiSchemaMetadata {
  return {
    description: `${what} No other properties are accepted: ${refused.join('; ')}. A body with any of them, or any other unknown property, is refused with 400 naming it, never silently dropped.`,
    additionalProperties: false,
  };
}

const nullableString = (description: string): OpenApiPropertyMetadata => ({
  required: false,
  type: () => String,
  nullable: true,
  description,
});

const tracking = (what: string): OpenApiPropertyMetadata => ({
  required: false,
  type: () => Boolean,
  nullable: true,
  description: `${what} Applies to html bodies only; omit (or null) for the account's default.`,
});

/** Fields of a single send and a batch item alike (`EmailContentDto`). */
export const EMAIL_CONTENT_OPENAPI: OpenApiMetadata = {
  from: {
    required: true,
    type: () => String,
    minLength: 1,
    description:
      'Sender, `name@example.com` or `Name <name@example.com>`, on a verified domain of the account.',
    example: 'Shop <shop@example.com>',
  },
  to: {
    required: true,
    type: () => [String],
    minItems: MIN_RECIPIENTS,
    maxItems: MAX_RECIPIENTS,
    description: `${MIN_RECIPIENTS} to ${MAX_RECIPIENTS} recipients, each in the same forms as \`from\`.`,
    example: ['ada@example.com'],
  },
  subject: {
    required: false,
    type: () => String,
    minLength: 1,
    description:
      'Inline mode: required, without line breaks. Template mode (templateId set): must be omitted.',
  },
  html: nullableString(
    'Inline mode: an html body (html and/or text must be non-empty). Omit in template mode.',
  ),
  text: nullableString(
    'Inline mode: a plain-text body (html and/or text must be non-empty). Omit in template mode.',
  ),
  templateId: {
    required: false,
    type: 'integer',
    minimum: 1,
    nullable: true,
    description: 'A saved template of the service: template mode (no subject, html or text).',
  },
  variables: {
    required: false,
    type: 'object',
    additionalProperties: { type: 'string' },
    nullable: true,
    description:
      "Only with templateId: exactly the template's {{placeholders}}, string values; a missing or unknown key is refused.",
  },
  trackOpens: tracking('Adds a tracking pixel.'),
  trackClicks: tracking('Rewrites links through a tracking redirect.'),
};

/**
 * `SendEmailDto`: the content fields first (so `from` and `to` lead), then scheduling and attachments;
 * `attachments` gets its item type from the DTO.
 */
export const SEND_EMAIL_OPENAPI: OpenApiMetadata = {
  ...EMAIL_CONTENT_OPENAPI,
  scheduledAt: {
    required: false,
    type: 'string',
    format: 'date-time',
    nullable: true,
    description:
      'RFC 3339 date-time with a timezone, at most 30 days (720 hours) ahead; a past time sends at once. Growth plan and above.',
    example: '2030-01-01T09:00:00Z',
  },
  attachments: {
    required: false,
    maxItems: MAX_ATTACHMENTS,
    description: `At most ${MAX_ATTACHMENTS} files, at most ${MIB} MiB (${MAX_ATTACHMENT_TOTAL_BYTES} bytes) decoded in total.`,
  },
};

/** `BatchEmailItemDto`: the content fields only; a batch item takes neither scheduling nor attachments. */
export const BATCH_ITEM_OPENAPI: OpenApiMetadata = EMAIL_CONTENT_OPENAPI;

/** Schema-level metadata of `SendEmailDto`. */
export const SEND_EMAIL_SCHEMA = closedSchema(
  'One email: inline (subject plus html and/or text) or from a saved template (templateId plus variables).',
  `the service does not support ${listRefused(UNSUPPORTED_EMAIL_FIELDS)}`,
);

/** Schema-level metadata of `BatchEmailItemDto`. */
export const BATCH_ITEM_SCHEMA = closedSchema(
  'One email of a batch, with the rules of a single send.',
  `a batch item takes no ${listRefused(NOT_IN_BATCH_FIELDS)}`,
  `the service does not support ${listRefused(UNSUPPORTED_EMAIL_FIELDS)}`,
);

/** `AttachmentDto`. */
export const ATTACHMENT_OPENAPI: OpenApiMetadata = {
  filename: {
    required: true,
    type: () => String,
    minLength: 1,
    maxLength: MAX_FILENAME_LENGTH,
    description: `1 to ${MAX_FILENAME_LENGTH} characters.`,
    example: 'invoice.pdf',
  },
  content: {
    required: true,
    type: () => String,
    format: 'byte',
    minLength: 1,
    description: 'The file, base64-encoded (standard alphabet, padded, no line breaks).',
  },
  contentType: {
    required: false,
    type: () => String,
    description: 'MIME type, such as `application/pdf`.',
    example: 'application/pdf',
  },
};

/** Schema-level metadata of `AttachmentDto`. */
export const ATTACHMENT_SCHEMA = closedSchema(
  'One attachment, its content given inline as base64.',
  `the service does not support ${listRefused(UNSUPPORTED_ATTACHMENT_FIELDS)}`,
);

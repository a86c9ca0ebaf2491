import type { BatchEmailItem } from '../interfaces/email-input.interface.js';
import { EmailRule } from './email-rule.decorator.js';
import type { OpenApiMetadata, OpenApiPropertyMetadata } from './openapi.helpers.js';
import {
  MAX_RECIPIENTS,
  MIN_RECIPIENTS,
  type RefusedFields,
  UNSUPPORTED_EMAIL_FIELD_NAMES,
} from './validation.constants.js';

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
 * The fields a single send and a batch item share, with the contract's rules. Not used alone: see
 * `SendEmailDto` and `BatchEmailItemDto`. Unsupported fields (cc, bcc, reply-to, headers, tags, raw MIME,
 * see the field table) are declared only so that giving one fails with a message naming it.
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export abstract class EmailContentDto implements BatchEmailItem {
  /** OpenAPI metadata that `@nestjs/swagger` reads (see docs/openapi.md). @internal */
  static _OPENAPI_METADATA_FACTORY = (): OpenApiMetadata => EMAIL_CONTENT_OPENAPI;

  /** Sender, `name@example.com` or `Name <name@example.com>`, on a verified domain. Required here. */
  @EmailRule('from') from!: string;
  /** 1 to 50 recipients, each in the same forms as `from`. */
  @EmailRule('to') to!: string[];
  /** Non-empty, no line breaks. Required inline; must be absent with `templateId`. */
  @EmailRule('subject') subject?: string;
  /** HTML body. Inline mode needs a non-empty `html` and/or `text`. */
  @EmailRule('html') html?: string | null;
  /** Plain-text body. */
  @EmailRule('text') text?: string | null;
  /** A saved template (positive integer). Then `variables` is required and subject/html/text absent. */
  @EmailRule('templateId') templateId?: number | null;
  /** Values of the template's placeholders, all strings; only with `templateId`. */
  @EmailRule('variables') variables?: Record<string, string> | null;
  /** Tracking pixel in the html body; omit or null for the account default. */
  @EmailRule('tracking') trackOpens?: boolean | null;
  /** Link rewriting in the html body; omit or null for the account default. */
  @EmailRule('tracking') trackClicks?: boolean | null;
}

// Unsupported fields are refused by name: one rule per entry of the field table, and `?: never` types
// derived from the same table (declaration merging), so that the list is kept in one place.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type
export interface EmailContentDto extends RefusedFields<typeof UNSUPPORTED_EMAIL_FIELD_NAMES> {}
for (const name of Object.keys(UNSUPPORTED_EMAIL_FIELD_NAMES)) {
  EmailRule('unsupported')(EmailContentDto.prototype, name);
}

import type { OpenApiMetadata, OpenApiPropertyMetadata } from './email-openapi.constants.js';

/** The status words the contract names as lifecycle kinds; the list is open (see `EmailStatus`). */
const KNOWN_STATUSES = 'sent, scheduled, failed, canceled, bounced, complained, opened, clicked';

const integer = (description: string, example?: number): OpenApiPropertyMetadata => ({
  required: true,
  type: 'integer',
  description,
  ...(example === undefined ? {} : { example }),
});

const dateTime = (description: string, nullable = false): OpenApiPropertyMetadata => ({
  required: true,
  type: 'string',
  format: 'date-time',
  ...(nullable ? { nullable: true } : {}),
  description,
});

const nullableString = (description: string): OpenApiPropertyMetadata => ({
  required: true,
  type: 'string',
  nullable: true,
  description,
});

/** `EmailLogDto`: a message record as `EmailService` returns it and JSON writes it (dates as strings). */
export const EMAIL_LOG_OPENAPI: OpenApiMetadata = {
  id: integer('Message id at the service.', 1),
  providerEmailId: nullableString('Identifier at the sending provider.'),
  fromAddress: { required: true, type: 'string', example: 'Shop <shop@example.com>' },
  toAddresses: { required: true, type: 'array', items: { type: 'string' }, example: ['ada@example.com'] },
  subject: { required: true, type: 'string', example: 'Your order' },
  status: {
    required: true,
    type: 'string',
    description: `A free string: ${KNOWN_STATUSES}, or another word the service may add. A send answers sent or scheduled; sent means accepted by the provider, not delivered.`,
    example: 'sent',
  },
  errorMessage: nullableString("The service's reason when the message failed."),
  scheduledAt: dateTime('When a scheduled message goes out.', true),
  trackOpens: { required: true, type: 'boolean' },
  trackClicks: { required: true, type: 'boolean' },
  openedAt: dateTime('First recorded open; null until one happens.', true),
  clickedAt: dateTime('First recorded click; null until one happens.', true),
  openCount: integer('Opens recorded so far.', 0),
  clickCount: integer('Clicks recorded so far.', 0),
  createdAt: dateTime('When the record was created.'),
  updatedAt: dateTime('When the record last changed.'),
};

/** `EmailDetailDto`: the record, then its bodies. */
export const EMAIL_DETAIL_OPENAPI: OpenApiMetadata = {
  ...EMAIL_LOG_OPENAPI,
  html: nullableString('The html body as sent (tracking pixel and links included).'),
  bodyText: nullableString('The plain-text body as sent.'),
};

/** `EmailEventDto`: an open or a click. */
export const EMAIL_EVENT_OPENAPI: OpenApiMetadata = {
  id: integer('Event id.', 1),
  type: { required: true, type: 'string', enum: ['open', 'click'] },
  url: nullableString('Destination of a click; null for an open.'),
  occurredAt: dateTime('When it was recorded.'),
};

/** `EmailValidationIssueDto`: one problem of a refused input. */
export const EMAIL_VALIDATION_ISSUE_OPENAPI: OpenApiMetadata = {
  path: {
    required: true,
    type: 'string',
    description: 'Where the problem is: `to[1]`, `attachments[0].content`, `cc`, `[3].to[7]` in a batch.',
    example: 'to[1]',
  },
  message: { required: true, type: 'string', description: 'What is wrong, naming the path.' },
};

/** `EmailErrorResponseDto`: the body of every answer `EmailErrorInterceptor` gives. */
export const EMAIL_ERROR_RESPONSE_OPENAPI: OpenApiMetadata = {
  statusCode: integer('The HTTP status of the answer.', 502),
  message: {
    required: true,
    type: 'string',
    description:
      "A fixed text safe for end users; never the API key, the request to the service or the service's own reason (that goes to the log).",
  },
  error: { required: true, type: 'string', description: 'The HTTP reason phrase.', example: 'Bad Gateway' },
  outcome: {
    required: false,
    type: 'string',
    enum: ['not-sent', 'uncertain'],
    description:
      'For a send: not-sent (nothing was created, a retry is safe) or uncertain (a message may exist).',
  },
  idempotencyKey: {
    required: false,
    type: 'string',
    description: 'An uncertain send: retry only with this key and the same content.',
  },
  retryAfterSeconds: {
    required: false,
    type: 'integer',
    minimum: 1,
    description: 'A 429: the wait the service asked for, also in the Retry-After header.',
  },
};

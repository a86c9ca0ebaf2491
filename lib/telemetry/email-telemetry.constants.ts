/** Name of our tracer and meter (the instrumentation scope). */
export const INSTRUMENTATION_SCOPE = 'nestjs-transactional-email';

/** The operations of `EmailService` that get a span. */
export type EmailOperation = 'send' | 'sendBatch' | 'list' | 'get' | 'listEvents' | 'findSent';

/**
 * Attribute names, in the OpenTelemetry semantic-convention style (`http.*` and `error.type` are the
 * conventions' own). Values are never the API key, an address, a subject or a body.
 */
export const ATTR = {
  operation: 'email.operation',
  outcome: 'email.outcome',
  attempts: 'email.attempts',
  attempt: 'email.attempt',
  messageId: 'email.message.id',
  messageStatus: 'email.message.status',
  idempotencyKey: 'email.idempotency_key',
  batchSize: 'email.batch.size',
  reconciled: 'email.reconciled',
  reconcileResult: 'email.reconcile.result',
  retryDelayMs: 'email.retry.delay_ms',
  method: 'http.request.method',
  path: 'url.path',
  status: 'http.response.status_code',
  errorType: 'error.type',
  /** Why the suppression list refused recipients: bounced, complained, unsubscribed, manual. */
  suppressionReason: 'email.suppression.reason',
  /** Only with `telemetry: { accountAttribute: true }` (some apps use addresses as account ids). */
  account: 'email.account.id',
} as const;

/** Metric names (counters and the duration histogram, in seconds as the conventions use). */
export const METRIC = {
  sends: 'email.client.sends',
  attempts: 'email.client.attempts',
  uncertain: 'email.client.uncertain_sends',
  suppressed: 'email.client.suppressed_recipients',
  duration: 'email.client.operation.duration',
} as const;

/** Span event names. */
export const EVENT = {
  attempt: 'email.attempt',
  reconcile: 'email.reconcile',
} as const;

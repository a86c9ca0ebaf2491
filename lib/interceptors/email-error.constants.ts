/**
 * The texts of the answers `EmailErrorInterceptor` gives. None quotes the service's own error text
 * or anything from the request to the service.
 * @example expect(body.message).toBe(EMAIL_HTTP_MESSAGES.timeout)
 */
export const EMAIL_HTTP_MESSAGES = {
  badRequest: 'The email service rejected the request as invalid',
  credentials: 'The email service refused this application\u2019s credentials',
  forbidden: 'The email service does not allow this operation for this account',
  notFound: 'The email was not found',
  conflict:
    'The idempotency key was already used for a different or still pending send; ' +
    'look the message up before trying again',
  rateLimited: 'Too many emails or requests for the email service; try again later',
  serverFailure: 'The email service failed to handle the request',
  unavailable: 'The email service is unavailable; try again later',
  unreachable: 'The email service could not be reached; try again later',
  timeout: 'The email service did not answer in time',
  aborted: 'The call to the email service was cancelled',
  unexpected: 'The email service gave an unexpected answer',
  sendUncertain:
    'The outcome of the send is uncertain: the email may or may not have been sent. ' +
    'Retry only with the same idempotency key and the same content.',
  batchUncertain:
    'The outcome of the batch is uncertain: some or all of its emails may have been sent. ' +
    'Do not resend it before looking its emails up.',
  queueUnavailable:
    'The email could not be queued because the queue is unavailable; try again later with the same job id',
  jobConflict: 'An email job with this id already exists with a different content; it was not queued',
  outboxUnavailable: 'The email outbox cannot reach its database; try again later with the same job id',
  jobCancelled: 'The email job was cancelled before it was sent: no email was sent',
  failed: 'The call to the email service failed',
  accountUnavailable: 'The email account could not be looked up; try again later',
  accountUnusable: 'The email account cannot be used',
  accountNotFound: 'The email account was not found',
  suppressed:
    'The email was not sent: a recipient is on the suppression list (it bounced, complained or unsubscribed)',
} as const;

/** Reason phrases of the statuses used in answers (the `error` field of the body). */
export const HTTP_REASON: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  404: 'Not Found',
  409: 'Conflict',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

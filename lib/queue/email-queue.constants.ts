/** Token of the resolved queue options.
 * @publicApi
 */
export const EMAIL_QUEUE_OPTIONS = Symbol('EMAIL_QUEUE_OPTIONS');
/** Token of the raw queue options (before checks). */
export const EMAIL_QUEUE_RAW_OPTIONS = Symbol('EMAIL_QUEUE_RAW_OPTIONS');
/** Name of the only job kind the queue holds. */
export const SEND_JOB_NAME = 'send';
/** Name of the custom backoff strategy (exponential with jitter). */
export const BACKOFF_NAME = 'email-backoff';

/** Token of the resolved queue options.
 * @publicApi
 */
export const EMAIL_QUEUE_OPTIONS = Symbol('EMAIL_QUEUE_OPTIONS');
/** Name of the custom backoff strategy (exponential with jitter). */
export const BACKOFF_NAME = 'email-backoff';

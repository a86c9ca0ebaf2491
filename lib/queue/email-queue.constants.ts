/** Name of the custom backoff strategy (exponential with jitter). */
export const BACKOFF_NAME = 'email-backoff';

/**
 * Injection token of the resolved `EmailOutboxOptions` (no secret: a connection string's password is the app's own).
 * @publicApi
 */
export const EMAIL_OUTBOX_OPTIONS = Symbol('EMAIL_OUTBOX_OPTIONS');

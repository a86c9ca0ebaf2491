/** Injection token of the resolved `EmailOutboxOptions`. */
export const EMAIL_OUTBOX_OPTIONS = Symbol('EMAIL_OUTBOX_OPTIONS');

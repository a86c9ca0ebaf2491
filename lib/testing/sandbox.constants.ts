/**
 * The service's limits as the sandbox enforces them, written from the service contract (never imported
 * from the client's `dto/`: an emulator must not share the code it checks). A spec
 * (test/sandbox/limits-agree.spec.ts) keeps them equal to the client's.
 */

/** Most recipients (`to`) of one email. */
export const SANDBOX_MAX_RECIPIENTS = 50;

/** Most emails in one batch. */
export const SANDBOX_MAX_BATCH_ITEMS = 100;

/** Most attachments of one send. */
export const SANDBOX_MAX_ATTACHMENTS = 5;

/**
 * Most decoded bytes of all attachments of one send together: 1.3 MiB rounded down to whole bytes
 * (1.3 x 1,048,576 = 1,363,148.8), as the client rounds it.
 */
export const SANDBOX_MAX_ATTACHMENT_BYTES = Math.floor(1.3 * 1024 * 1024);

/** How far ahead `scheduledAt` may be: 30 days. */
export const SANDBOX_MAX_SCHEDULE_AHEAD_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * The service's limits, as named numbers. Every check in this folder reads them from here.
 */

/** Fewest recipients in `to`. @default 1 */
export const MIN_RECIPIENTS = 1;

/**
 * Most recipients in `to` (single sends and batch items alike). @default 50
 * @publicApi
 */
export const MAX_RECIPIENTS = 50;

/** Fewest emails in one batch. @default 1 */
export const MIN_BATCH_ITEMS = 1;

/**
 * Most emails in one batch. @default 100
 * @publicApi
 */
export const MAX_BATCH_ITEMS = 100;

/**
 * Most attachments on one single send. @default 5
 * @publicApi
 */
export const MAX_ATTACHMENTS = 5;

/**
 * Most decoded bytes of all attachments of one send together: 1.3 MiB, rounded down to whole bytes
 * (1.3 x 1,048,576 = 1,363,148.8).
 * @default 1363148
 * @publicApi
 */
export const MAX_ATTACHMENT_TOTAL_BYTES = Math.floor(1.3 * 1024 * 1024);

/**
 * Longest attachment filename, in characters counted as UTF-16 code units (JavaScript's `length`: an
 * emoji counts 2), the strictest usual count, so that no server counting otherwise refuses it. @default 255
 * @publicApi
 */
export const MAX_FILENAME_LENGTH = 255;

/**
 * How far ahead `scheduledAt` may be: 30 days of 24 hours, in milliseconds, no tolerance. @default 2592000000
 * @publicApi
 */
export const MAX_SCHEDULE_AHEAD_MS = 30 * 24 * 60 * 60 * 1000;

/** Longest address (`local@domain`), in UTF-16 units. @default 254 */
export const MAX_ADDRESS_LENGTH = 254;

/** Longest local part (before the `@`). @default 64 */
export const MAX_LOCAL_PART_LENGTH = 64;

/** Longest domain label (between dots). @default 63 */
export const MAX_DOMAIN_LABEL_LENGTH = 63;

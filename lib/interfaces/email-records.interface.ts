/**
 * Status of a message record. The service documents these words as lifecycle kinds but does not
 * promise a closed list, so any other string may appear too.
 * @publicApi
 */
export type EmailStatus =
  | 'sent'
  | 'scheduled'
  | 'failed'
  | 'canceled'
  | 'bounced'
  | 'complained'
  | 'opened'
  | 'clicked'
  | (string & {});

/**
 * A message record (`EmailLog` in the service contract). Date-time fields are `Date`s.
 * @publicApi
 */
export interface EmailLog {
  id: number;
  providerEmailId: string | null;
  fromAddress: string;
  toAddresses: string[];
  subject: string;
  status: EmailStatus;
  errorMessage: string | null;
  scheduledAt: Date | null;
  trackOpens: boolean;
  trackClicks: boolean;
  /** First recorded open, or null until one happens. */
  openedAt: Date | null;
  /** First recorded click, or null until one happens. */
  clickedAt: Date | null;
  openCount: number;
  clickCount: number;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * A message record with its bodies (`GET /emails/{id}`).
 * @publicApi
 */
export interface EmailDetail extends EmailLog {
  html: string | null;
  bodyText: string | null;
}

/**
 * An open or click recorded for a message.
 * @publicApi
 */
export interface EmailEvent {
  id: number;
  type: 'open' | 'click';
  /** Destination URL of a click; null for opens. */
  url: string | null;
  occurredAt: Date;
}

/**
 * How sure a look-up in the message log is that it found a send's own message:
 * - `'proven'`: one record carries the send's own content and no other call of this instance holds it;
 * - `'none'`: no record has its sender, recipients and subject (which proves nothing on a busy account:
 *   the log holds the newest 100 records at most);
 * - `'held'`: records look like it, but every one that could be it is held by another call of this
 *   instance: handed to a send, a batch or a look-up, or carrying the content of an identical send or
 *   batch item still in flight (they are in `held`). The message may well exist: never read this as
 *   "not sent";
 * - `'unproven'`: records look like it, but none can be shown to be it and no other's (a template send,
 *   whose rendered content only the service knows; several records with the same content; more look-alikes
 *   than a look-up reads).
 * @publicApi
 */
export type FindSentCertainty = 'proven' | 'none' | 'held' | 'unproven';

/**
 * What `EmailService.findSent` found.
 * @publicApi
 */
export interface FindSentResult {
  /** The send's own message record: set only when `certainty` is `'proven'`. */
  record: EmailLog | null;
  certainty: FindSentCertainty;
  /**
   * Every record with the send's sender, recipients, subject (inline sends) and time that no other
   * call of this instance holds, earliest first: for a person to decide when nothing is proven.
   */
  candidates: EmailLog[];
  /**
   * The look-alikes (same sender, recipients, subject and time) that another call of this instance holds
   * or may still hold, earliest first: why the answer is `'held'` rather than `'none'`.
   */
  held: EmailLog[];
}

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

/**
 * A message record as the sandbox sends it over the wire (`EmailLog` of the contract);
 * date-time fields are ISO 8601 strings.
 * @publicApi
 */
export interface SandboxEmailLog {
  id: number;
  providerEmailId: string | null;
  fromAddress: string;
  toAddresses: string[];
  subject: string;
  status: string;
  errorMessage: string | null;
  scheduledAt: string | null;
  trackOpens: boolean;
  trackClicks: boolean;
  openedAt: string | null;
  clickedAt: string | null;
  openCount: number;
  clickCount: number;
  createdAt: string;
  updatedAt: string;
}

/**
 * A message record with its bodies (`EmailDetail`); `html` holds the tracking pixel and links when on.
 * @publicApi
 */
export interface SandboxEmailDetail extends SandboxEmailLog {
  html: string | null;
  bodyText: string | null;
}

/**
 * An open or click recorded for a message (`EmailEvent`).
 * @publicApi
 */
export interface SandboxEmailEvent {
  id: number;
  type: 'open' | 'click';
  /** Destination of a click; null for an open. */
  url: string | null;
  occurredAt: string;
}

/** The `EmailLog` view of a detail record (drops the bodies), fields in contract order. */
export function toLog(d: SandboxEmailDetail): SandboxEmailLog {
  return {
    id: d.id,
    providerEmailId: d.providerEmailId,
    fromAddress: d.fromAddress,
    toAddresses: d.toAddresses,
    subject: d.subject,
    status: d.status,
    errorMessage: d.errorMessage,
    scheduledAt: d.scheduledAt,
    trackOpens: d.trackOpens,
    trackClicks: d.trackClicks,
    openedAt: d.openedAt,
    clickedAt: d.clickedAt,
    openCount: d.openCount,
    clickCount: d.clickCount,
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
  };
}

/** A deep-enough copy for handing records to tests without exposing the sandbox's own objects. */
export function copyDetail(d: SandboxEmailDetail): SandboxEmailDetail {
  return { ...d, toAddresses: [...d.toAddresses] };
}

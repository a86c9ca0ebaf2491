import type { EmailLog } from '../../lib/index.js';

/** A contract-shaped EmailLog as the service would send it. */
export function emailLogJson(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 1,
    providerEmailId: 'prov-1',
    fromAddress: 'app@example.com',
    toAddresses: ['ada@example.com'],
    subject: 'Hello',
    status: 'sent',
    errorMessage: null,
    scheduledAt: null,
    trackOpens: false,
    trackClicks: false,
    openedAt: null,
    clickedAt: null,
    openCount: 0,
    clickCount: 0,
    createdAt: '2026-11-22T08:00:00.000Z',
    updatedAt: '2026-11-22T08:00:01.000Z',
    ...overrides,
  };
}

export function emailDetailJson(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...emailLogJson(), html: '<p>Hi</p>', bodyText: null, ...overrides };
}

/** A parsed EmailLog (dates as `Date`), as `EmailService` returns it. */
export function emailLog(overrides: Partial<EmailLog> = {}): EmailLog {
  const json = emailLogJson();
  return {
    ...(json as unknown as EmailLog),
    providerEmailId: null,
    createdAt: new Date(json.createdAt as string),
    updatedAt: new Date(json.updatedAt as string),
    ...overrides,
  };
}

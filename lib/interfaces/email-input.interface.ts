/**
 * A file attached to a single send, its content base64-encoded.
 * @publicApi
 */
export interface AttachmentInput {
  /** 1 to 255 characters. */
  filename: string;
  /** Base64 of the file's bytes (not empty). */
  content: string;
  contentType?: string;
}

/**
 * One email as a batch item accepts it: inline (`subject` + `html` and/or `text`) or from a template
 * (`templateId` + `variables`, and then no subject, html or text).
 * @publicApi
 */
export interface BatchEmailItem {
  /** Sender; may be omitted when the module has `defaultFrom`. */
  from?: string;
  /** 1 to 50 recipients. */
  to: string[];
  subject?: string;
  html?: string | null;
  text?: string | null;
  templateId?: number | null;
  variables?: Record<string, string> | null;
  /** Omit to use the account default. Applies to html bodies only. */
  trackOpens?: boolean | null;
  /** Omit to use the account default. Applies to html bodies only. */
  trackClicks?: boolean | null;
}

/**
 * Body of a single send (`POST /emails`).
 * @publicApi
 */
export interface EmailInput extends BatchEmailItem {
  /** When to send (Growth plan and above, at most 30 days ahead; a past time sends at once). */
  scheduledAt?: Date | string | null;
  /** At most 5 files, at most 1.3 MiB decoded in total. */
  attachments?: AttachmentInput[];
}

import type { StoredMessage } from './sandbox.store.js';

/** One attachment of a message as the outbox shows it; `content` is dropped once the byte budget is spent. */
export interface KeptAttachment {
  filename: string;
  contentType: string | null;
  /** Decoded size in bytes. */
  size: number;
  content: Buffer | null;
}

/** What a send carried that the message record does not hold: template, variables, attachments. */
export interface MessageExtras {
  /** The html as the send carried it (template rendered), before tracking rewrote it. */
  html: string | null;
  templateId: number | null;
  variables: Record<string, string> | null;
  attachments: KeptAttachment[];
}

/** The request a message came from, for the outbox page's raw view (no credentials kept). */
export interface KeptRequest {
  method: string;
  path: string;
  idempotencyKey: string | null;
  /** Index of the item in a batch; null for a single send. */
  batchItem: number | null;
  /**
   * The JSON as received (a single send) or the item re-serialised (a batch). Past `KEPT_REQUEST_CHARS`
   * attachment contents are replaced by a note, then the rest is cut.
   */
  body: string;
  truncated: boolean;
}

/** Characters of a request body kept per message (attachments make bodies large). */
export const KEPT_REQUEST_CHARS = 64 * 1024;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Attachment bytes kept across all messages; past this the oldest contents are dropped (names and sizes stay). */
export const KEPT_ATTACHMENT_BYTES = 32 * 1024 * 1024;

/**
 * Keeps, per message, what the outbox page shows beyond the record. Attachment contents share one
 * byte budget, oldest dropped first, so a long load test with attachments cannot exhaust memory.
 *
 * @example
 * extras.keep(msg, { templateId: 1, variables: { name: 'Ada' } }, html, body.attachments);
 */
export class SandboxExtras {
  private byMessage = new WeakMap<StoredMessage, MessageExtras>();
  private requests = new WeakMap<StoredMessage, KeptRequest>();
  private withContent: KeptAttachment[] = [];
  private bytes = 0;

  constructor(private readonly budget = KEPT_ATTACHMENT_BYTES) {}

  /** Records the extras of a new message; `attachments` is the validated `attachments` field of the send. */
  keep(
    msg: StoredMessage,
    input: { templateId: number | null; variables: Record<string, string> | null },
    html: string | null,
    attachments: unknown,
  ): void {
    const kept: KeptAttachment[] = [];
    for (const a of Array.isArray(attachments) ? attachments : []) {
      const content = Buffer.from(String(a.content), 'base64');
      const type = typeof a.contentType === 'string' ? a.contentType : null;
      const item = { filename: String(a.filename), contentType: type, size: content.length, content };
      kept.push(item);
      this.withContent.push(item);
      this.bytes += content.length;
    }
    while (this.bytes > this.budget && this.withContent.length > 0) {
      const oldest = this.withContent.shift() as KeptAttachment;
      this.bytes -= oldest.size;
      oldest.content = null;
    }
    const variables = input.variables && { ...input.variables };
    this.byMessage.set(msg, { html, templateId: input.templateId, variables, attachments: kept });
  }

  /** The extras of a message (none recorded: no template, no attachments). */
  of(msg: StoredMessage): MessageExtras {
    return (
      this.byMessage.get(msg) ?? { html: msg.detail.html, templateId: null, variables: null, attachments: [] }
    );
  }

  /**
   * Records the request a message came from. A body past `KEPT_REQUEST_CHARS` has its attachment
   * contents replaced by a note (they are kept, and downloadable, as attachments); what is still too
   * long is cut.
   */
  keepRequest(msg: StoredMessage, request: Omit<KeptRequest, 'truncated'>, json?: unknown): void {
    let text = request.body;
    if (text.length > KEPT_REQUEST_CHARS && isObject(json) && Array.isArray(json.attachments)) {
      const attachments = json.attachments.map((a: unknown) =>
        isObject(a) && typeof a.content === 'string'
          ? {
              ...a,
              content: `[${a.content.length} characters of base64 not shown here: download the attachment]`,
            }
          : a,
      );
      text = JSON.stringify({ ...json, attachments });
    }
    const truncated = text.length > KEPT_REQUEST_CHARS;
    const body = truncated ? text.slice(0, KEPT_REQUEST_CHARS) : text;
    this.requests.set(msg, { ...request, body, truncated });
  }

  /** The request a message came from, or null when none was recorded (e.g. restored from `--data`). */
  requestOf(msg: StoredMessage): KeptRequest | null {
    return this.requests.get(msg) ?? null;
  }

  /** Forgets everything. */
  clear(): void {
    this.byMessage = new WeakMap();
    this.requests = new WeakMap();
    this.withContent = [];
    this.bytes = 0;
  }
}

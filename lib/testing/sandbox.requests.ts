import type { IncomingHttpHeaders } from 'node:http';

/**
 * One request the sandbox received on a contract route, as tests see it.
 * @publicApi
 */
export interface SandboxRequestRecord {
  method: string;
  /** Path and query as received (base path included). */
  path: string;
  /** Lower-case header names; `authorization` is masked (`Bearer ***`). */
  headers: Record<string, string>;
  /** Raw body text ('' when none); only its first `MAX_LOGGED_BODY_BYTES` when `truncated`. */
  body: string;
  /** The body parsed as JSON, or undefined when it is empty, not JSON or truncated. */
  json: unknown;
  /** Size of the whole body as received, in bytes. */
  bodyBytes: number;
  /** True when `body` is only an excerpt of a larger body. */
  truncated: boolean;
  /** Sandbox-clock time of arrival. */
  receivedAt: string;
  /** Fault applied to it, if any, e.g. `'status 503'` or `'drop-after'`. */
  fault: string | null;
  /** Status answered; null while pending or when no answer was sent (dropped, hanging). */
  status: number | null;
}

/** What the hot path keeps per request; turned into a `SandboxRequestRecord` only when asked. */
export interface LoggedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  raw: Buffer;
  /** Size of the whole body; `raw` may be an excerpt of it once logged. */
  bodyBytes?: number;
  receivedAt: number;
  fault: string | null;
  status: number | null;
}

/** Copies headers, masking the credential. */
export function maskHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  if (out.authorization !== undefined) {
    out.authorization = /^bearer\s/i.test(out.authorization) ? 'Bearer ***' : '***';
  }
  return out;
}

/**
 * Most of a body the log keeps: more than the largest body the contract accepts (1.3 MiB of attachments,
 * base64-encoded, with the rest of the email), so that any valid request is kept whole.
 */
export const MAX_LOGGED_BODY_BYTES = 2 * 1024 * 1024;

/** Most body bytes the whole log keeps; past it the oldest requests are forgotten first. */
export const MAX_LOGGED_BYTES = 32 * 1024 * 1024;

/** The last `capacity` requests (and at most `MAX_LOGGED_BYTES` of bodies), oldest first. */
export class SandboxRequestLog {
  private entries: LoggedRequest[] = [];
  private head = 0;
  private bytes = 0;

  constructor(
    private readonly capacity: number,
    private readonly maxBytes = MAX_LOGGED_BYTES,
  ) {}

  /** Appends a request, keeping at most an excerpt of its body; the oldest are dropped past the bounds. */
  add(entry: LoggedRequest): void {
    if (this.capacity <= 0) return;
    entry.bodyBytes = entry.raw.length;
    if (entry.raw.length > MAX_LOGGED_BODY_BYTES)
      entry.raw = Buffer.from(entry.raw.subarray(0, MAX_LOGGED_BODY_BYTES));
    this.entries.push(entry);
    this.bytes += entry.raw.length;
    while (
      this.entries.length - this.head > this.capacity ||
      (this.bytes > this.maxBytes && this.entries.length - this.head > 1)
    ) {
      this.bytes -= this.entries[this.head].raw.length;
      this.entries[this.head] = undefined as unknown as LoggedRequest; // let it be collected
      this.head++;
    }
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
  }

  /** How many requests and body bytes the log holds now. */
  size(): { requests: number; bytes: number } {
    return { requests: this.entries.length - this.head, bytes: this.bytes };
  }

  /** The kept requests, oldest first, as independent copies. */
  list(): SandboxRequestRecord[] {
    return this.entries.slice(this.head).map((e) => {
      const bodyBytes = e.bodyBytes ?? e.raw.length;
      const truncated = bodyBytes > e.raw.length;
      return {
        method: e.method,
        path: e.path,
        headers: maskHeaders(e.headers),
        body: e.raw.toString('utf8'),
        json: e.raw.length && !truncated ? safeParse(e.raw) : undefined,
        bodyBytes,
        truncated,
        receivedAt: new Date(e.receivedAt).toISOString(),
        fault: e.fault,
        status: e.status,
      };
    });
  }

  /** Forgets every request. */
  clear(): void {
    this.entries = [];
    this.head = 0;
    this.bytes = 0;
  }
}

function safeParse(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
}

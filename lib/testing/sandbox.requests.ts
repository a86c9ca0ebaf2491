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
  /** Raw body text ('' when none). */
  body: string;
  /** The body parsed as JSON, or undefined when it is empty or not JSON. */
  json: unknown;
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

/** The last `capacity` requests, oldest first. */
export class SandboxRequestLog {
  private entries: LoggedRequest[] = [];

  constructor(private readonly capacity: number) {}

  /** Appends a request (the oldest are dropped past capacity). */
  add(entry: LoggedRequest): void {
    if (this.capacity <= 0) return;
    this.entries.push(entry);
    if (this.entries.length > this.capacity + 1024) this.entries = this.entries.slice(-this.capacity);
  }

  /** The kept requests, oldest first, as independent copies. */
  list(): SandboxRequestRecord[] {
    return this.entries.slice(-this.capacity).map((e) => ({
      method: e.method,
      path: e.path,
      headers: maskHeaders(e.headers),
      body: e.raw.toString('utf8'),
      json: e.raw.length ? safeParse(e.raw) : undefined,
      receivedAt: new Date(e.receivedAt).toISOString(),
      fault: e.fault,
      status: e.status,
    }));
  }

  /** Forgets every request. */
  clear(): void {
    this.entries = [];
  }
}

function safeParse(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
}

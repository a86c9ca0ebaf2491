import type { IncomingHttpHeaders } from 'node:http';

/** One request the sandbox received on a contract route, as tests see it. */
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
  /** Fault applied to it, if any. */
  fault: string | null;
  /** Status answered; null while pending or when the connection was dropped. */
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
  private entries: SandboxRequestRecord[] = [];

  constructor(private readonly capacity: number) {}

  /** Appends a request (dropping the oldest past capacity). */
  add(entry: SandboxRequestRecord): void {
    if (this.capacity <= 0) return;
    this.entries.push(entry);
    if (this.entries.length > this.capacity + 256) this.entries = this.entries.slice(-this.capacity);
  }

  /** Copies of the kept requests, oldest first. */
  list(): SandboxRequestRecord[] {
    return this.entries.slice(-this.capacity).map((e) => ({ ...e, headers: { ...e.headers } }));
  }

  /** Forgets every request. */
  clear(): void {
    this.entries = [];
  }
}

import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * An answer the sandbox gives with an error status and a `{ error }` body.
 *
 * @example
 * throw new SandboxHttpError(400, 'to must hold 1 to 50 addresses');
 */
export class SandboxHttpError extends Error {
  constructor(
    /** HTTP status of the answer. */
    readonly status: number,
    message: string,
    /** Extra response headers, e.g. `Retry-After`. */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'SandboxHttpError';
  }
}

/** What a route handler decided to answer. */
export interface SandboxReply {
  status: number;
  /** Serialised as JSON; `undefined` gives an empty body. */
  body?: unknown;
  /** Bytes sent as they are instead of `body` (set `content-type` in `headers`). */
  raw?: Buffer;
  headers?: Record<string, string>;
  /** Called once the answer is delivered or lost (idempotency bookkeeping). */
  finish?: () => void;
}

/** Turns a thrown value into the reply the client sees (500 for anything unexpected). */
export function errorReply(err: unknown): SandboxReply {
  if (err instanceof SandboxHttpError) {
    return { status: err.status, body: { error: err.message }, headers: err.headers };
  }
  const message = err instanceof Error ? err.message : String(err);
  return { status: 500, body: { error: `sandbox internal error: ${message}` } };
}

/** Reads the whole request body; rejects with 400 past `limit` bytes (the rest is discarded). */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) tooLarge = true;
      else chunks.push(chunk);
    });
    req.on('end', () => {
      if (tooLarge) reject(new SandboxHttpError(400, `request body is larger than ${limit} bytes`));
      else resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    });
    req.on('error', reject);
  });
}

/** Writes a reply as JSON with an exact Content-Length. */
export function writeReply(res: ServerResponse, reply: SandboxReply): void {
  const data = reply.raw ?? (reply.body === undefined ? '' : JSON.stringify(reply.body));
  const headers: Record<string, string | number> = {
    'content-length': typeof data === 'string' ? Buffer.byteLength(data) : data.length,
  };
  if (reply.body !== undefined && !reply.raw) headers['content-type'] = 'application/json; charset=utf-8';
  if (reply.headers) Object.assign(headers, reply.headers);
  res.writeHead(reply.status, headers);
  res.end(data);
}

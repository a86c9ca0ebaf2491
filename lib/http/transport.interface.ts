import type { IncomingHttpHeaders } from 'node:http';

/** One HTTP exchange the transport performs. */
export interface TransportRequest {
  method: 'GET' | 'POST';
  /** Operation path relative to the base URL, with its query string (`/emails?limit=1`). */
  path: string;
  /** Whether the request may create a message: decides the `outcome` of its errors (`outcomeOf`). */
  createsMessage: boolean;
  /** The exact bytes of the body (JSON), sent as given: never serialized again. */
  body?: string | Buffer;
  /** Sent as `Idempotency-Key`. */
  idempotencyKey?: string;
  /** Epoch ms after which the exchange is abandoned (the whole call's deadline). */
  deadline: number;
  /** The budget the deadline came from, for error messages. */
  timeoutMs: number;
  /** The caller's signal. */
  signal?: AbortSignal;
}

/** A complete response, its body read into memory. */
export interface TransportResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

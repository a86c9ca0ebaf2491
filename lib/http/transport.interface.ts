import type { IncomingHttpHeaders } from 'node:http';
import type { CallContext } from '../interfaces/call-options.interface.js';

/** What one HTTP exchange sends: the call's own description (`ApiCall` is one), taken as it is. */
export interface TransportCall {
  method: 'GET' | 'POST';
  /** Operation path relative to the base URL, with its query string (`/emails?limit=1`). */
  path: string;
  /** Whether the request may create a message: decides the `outcome` of its errors (`outcomeOf`). */
  createsMessage: boolean;
  /** The exact bytes of the body (JSON), sent as given: never serialized again. */
  body?: string | Buffer;
  /** Sent as `Idempotency-Key`. */
  idempotencyKey?: string;
}

export type { CallContext };

/** A complete response, its body read into memory. */
export interface TransportResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** Turns a call's whole response into its result, or throws the error it stands for (run as the exchange ends). */
export type ReadAnswer<C extends TransportCall, T> = (call: C, res: TransportResponse) => T;

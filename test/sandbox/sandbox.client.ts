import { request as httpRequest } from 'node:http';
import { Agent, request } from 'undici';
import type { SandboxMailbox } from '../../lib/testing/index.js';

/** A raw answer of the sandbox. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

/** Options of one raw call. */
export interface CallOptions {
  /** JSON-encoded unless it is already a string. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Bearer key; `null` sends no Authorization header. @default the sandbox's apiKey */
  key?: string | null;
  idempotencyKey?: string;
  signal?: AbortSignal;
}

/**
 * A deliberately plain HTTP client (undici `request`, nothing of our EmailService) so the sandbox is
 * checked independently of the client it is meant to check.
 */
export class RawClient {
  readonly agent = new Agent({ keepAliveTimeout: 1000, connections: 16 });

  /** `sandbox` gives the sandbox or mailbox to call (its `baseUrl`, and its `apiKey` by default). */
  constructor(private readonly sandbox: () => Pick<SandboxMailbox, 'baseUrl' | 'apiKey'>) {}

  async call(method: string, path: string, opts: CallOptions = {}): Promise<RawAnswer> {
    const sb = this.sandbox();
    const headers: Record<string, string> = { ...opts.headers };
    const key = opts.key === undefined ? sb.apiKey : opts.key;
    if (key !== null) headers.authorization = `Bearer ${key}`;
    if (opts.idempotencyKey !== undefined) headers['idempotency-key'] = opts.idempotencyKey;
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await request(sb.baseUrl + path, {
      method: method as 'GET',
      headers,
      body,
      dispatcher: this.agent,
      signal: opts.signal,
    });
    const text = await res.body.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.statusCode, headers: res.headers, text, json };
  }

  send(body: unknown, opts: CallOptions = {}): Promise<RawAnswer> {
    return this.call('POST', '/emails', { ...opts, body });
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

/** A valid inline send. */
export const inline = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  from: 'Shop <orders@example.com>',
  to: ['ada@example.org'],
  subject: 'Your order',
  html: '<p>Thanks!</p>',
  text: 'Thanks!',
  ...extra,
});

/** The EmailLog fields of the contract, in order. */
export const LOG_FIELDS = [
  'id',
  'providerEmailId',
  'fromAddress',
  'toAddresses',
  'subject',
  'status',
  'errorMessage',
  'scheduledAt',
  'trackOpens',
  'trackClicks',
  'openedAt',
  'clickedAt',
  'openCount',
  'clickCount',
  'createdAt',
  'updatedAt',
];

/** An ISO 8601 date-time string as the sandbox writes it. */
export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** One request over node:http with the headers exactly as given (`Host` included), on 127.0.0.1:`port`. */
export function hostRequest(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The message a failing assertion throws; throws itself when the assertion passes. */
export function assertionFailure(assertion: () => unknown): string {
  try {
    assertion();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('the assertion passed');
}

import { inspect } from 'node:util';
import { Pool, type Dispatcher } from 'undici';
import {
  KEEP_ALIVE_MAX_TIMEOUT_MS,
  KEEP_ALIVE_TIMEOUT_MS,
  MAX_RESPONSE_BYTES,
  PACKAGE_NAME,
  PACKAGE_VERSION,
} from '../email.constants.js';
import { EmailAbortError, EmailTimeoutError } from '../errors/email-transport.error.js';
import { EmailError } from '../errors/email.error.js';
import type { ResolvedEmailOptions } from '../interfaces/email-module-options.interface.js';
import { readBody } from './response-body.reader.js';
import { mapTransportError, type EndReason } from './transport-error.map.js';
import type { TransportRequest, TransportResponse } from './transport.types.js';

const USER_AGENT = `${PACKAGE_NAME}/${PACKAGE_VERSION} (node ${process.version})`;

/**
 * One undici connection pool per module instance, with the API key kept in a private field.
 * Performs one HTTP exchange at a time per call; retries are decided above it.
 */
export class EmailTransport {
  readonly #dispatcher: Dispatcher;
  readonly #owned: boolean;
  readonly #authorization: string;
  readonly #options: ResolvedEmailOptions;
  #closed = false;

  constructor(options: ResolvedEmailOptions, apiKey: string) {
    this.#options = options;
    this.#authorization = `Bearer ${apiKey}`;
    this.#owned = options.dispatcher === undefined;
    this.#dispatcher =
      options.dispatcher ??
      new Pool(options.origin, {
        connections: options.connections,
        keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
        keepAliveMaxTimeout: KEEP_ALIVE_MAX_TIMEOUT_MS,
        connect: { timeout: options.connectTimeoutMs },
      });
  }

  /** Sends one request and reads the whole response. Throws our transport errors only. */
  async request(req: TransportRequest): Promise<TransportResponse> {
    const { method, path } = req;
    const send = method === 'POST';
    if (req.signal?.aborted) {
      throw new EmailAbortError({ method, path, cause: req.signal.reason, outcome: send ? 'not-sent' : undefined });
    }
    const remaining = req.deadline - Date.now();
    if (remaining <= 0) {
      throw new EmailTimeoutError({ method, path, timeoutMs: req.timeoutMs, outcome: send ? 'not-sent' : undefined });
    }
    const controller = new AbortController();
    let ended: EndReason;
    const timer = setTimeout(() => {
      ended = 'deadline';
      controller.abort();
    }, remaining);
    const onCallerAbort = (): void => {
      ended ??= 'caller';
      controller.abort();
    };
    req.signal?.addEventListener('abort', onCallerAbort, { once: true });
    const headers: Record<string, string> = {
      authorization: this.#authorization,
      accept: 'application/json',
      'user-agent': USER_AGENT,
    };
    if (req.body !== undefined) headers['content-type'] = 'application/json';
    if (req.idempotencyKey !== undefined) headers['idempotency-key'] = req.idempotencyKey;
    try {
      const res = await this.#dispatcher.request({
        origin: this.#options.origin,
        path: this.#options.pathPrefix + path,
        method,
        headers,
        body: req.body,
        signal: controller.signal,
        headersTimeout: remaining + 1_000,
        bodyTimeout: remaining + 1_000,
      });
      const text = await readBody(res, MAX_RESPONSE_BYTES, { method, path });
      return { status: res.statusCode, headers: res.headers, text };
    } catch (err) {
      if (err instanceof EmailError) throw err;
      throw mapTransportError(err, {
        method,
        path,
        timeoutMs: req.timeoutMs,
        connectTimeoutMs: this.#options.connectTimeoutMs,
        ended,
      });
    } finally {
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onCallerAbort);
    }
  }

  /** Closes the pool this transport created; a caller-supplied dispatcher is left alone. */
  async close(): Promise<void> {
    if (this.#closed || !this.#owned) return;
    this.#closed = true;
    await this.#dispatcher.close();
  }

  /** Whether the transport's own pool has been closed. */
  get closed(): boolean {
    return this.#closed;
  }

  toJSON(): Record<string, unknown> {
    return { origin: this.#options.origin, pathPrefix: this.#options.pathPrefix, closed: this.#closed };
  }

  [inspect.custom](): string {
    return `EmailTransport { origin: '${this.#options.origin}', apiKey: '[redacted]' }`;
  }
}

import { inspect } from 'node:util';
import { Pool, type Dispatcher } from 'undici';
import {
  KEEP_ALIVE_MAX_TIMEOUT_MS,
  KEEP_ALIVE_TIMEOUT_MS,
  MAX_RESPONSE_BYTES,
  PACKAGE_NAME,
  PACKAGE_VERSION,
} from '../config/email.constants.js';
import { EmailAbortError, EmailTimeoutError } from '../errors/email-transport.error.js';
import { EmailError } from '../errors/email.error.js';
import type { ResolvedEmailOptions } from '../interfaces/email-module-options.interface.js';
import { ExchangeDeadlines, Expiring } from './exchange-deadlines.store.js';
import { ResponseReader, type ReadEnd } from './response-body.client.js';
import { outcomeOf } from '../policy/delivery.policy.js';
import { mapTransportError, type EndReason } from './failure.parser.js';
import type { CallContext, ReadAnswer, TransportCall, TransportResponse } from './transport.interface.js';

const USER_AGENT = `${PACKAGE_NAME}/${PACKAGE_VERSION} (node ${process.version})`;
const JSON_TYPE = 'application/json';

/**
 * One exchange in flight: its whole-call deadline (in its transport's `ExchangeDeadlines`), the caller's
 * signal and the promise it settles. No timer of its own, and no AbortController: the reader drops the
 * connection itself.
 */
class Exchange<C extends TransportCall, T> extends Expiring implements ReadEnd {
  readonly reader: ResponseReader;
  #settled = false;

  constructor(
    private readonly call: C,
    private readonly ctx: CallContext,
    private readonly connectTimeoutMs: number,
    private readonly deadlines: ExchangeDeadlines,
    private readonly read: ReadAnswer<C, T>,
    private readonly settle: (answer: T) => void,
    private readonly fail: (err: unknown) => void,
  ) {
    super();
    this.reader = new ResponseReader(MAX_RESPONSE_BYTES, call, this);
  }

  /** Arms the deadline (`remaining` ms from now) and listens to the caller's signal. */
  arm(remaining: number): void {
    this.deadlines.add(this, remaining);
    this.ctx.signal?.addEventListener('abort', this, { once: true });
  }

  /** The call's deadline passed. */
  expire(): void {
    this.#end('deadline');
  }

  /** The caller's signal fired (EventTarget listener object: no closure per exchange). */
  handleEvent(): void {
    this.#end('caller');
  }

  /** The whole response came: the exchange's promise settles with what `read` makes of it (or throws). */
  resolve(res: TransportResponse): void {
    if (this.#settled) return;
    this.#disarm();
    let answer: T;
    try {
      answer = this.read(this.call, res);
    } catch (err) {
      this.fail(err); // the error the response stands for, as `read` made it
      return;
    }
    this.settle(answer);
  }

  reject(err: unknown): void {
    if (this.#settled) return;
    this.#disarm();
    this.fail(err instanceof EmailError ? err : this.#mapped(err, undefined));
  }

  #end(ended: Exclude<EndReason, undefined>): void {
    if (this.#settled) return;
    this.#disarm();
    const reason =
      ended === 'caller'
        ? (this.ctx.signal?.reason ?? new DOMException('This operation was aborted', 'AbortError'))
        : new DOMException(`The call deadline of ${this.ctx.timeoutMs} ms was reached`, 'TimeoutError');
    this.reader.cancel(reason instanceof Error ? reason : new DOMException(String(reason), 'AbortError'));
    this.fail(this.#mapped(reason, ended));
  }

  #disarm(): void {
    this.#settled = true;
    this.deadlines.remove(this);
    this.ctx.signal?.removeEventListener('abort', this);
  }

  #mapped(err: unknown, ended: EndReason): EmailError {
    const { method, path, createsMessage } = this.call;
    const { timeoutMs } = this.ctx;
    return mapTransportError(err, {
      method,
      path,
      createsMessage,
      timeoutMs,
      connectTimeoutMs: this.connectTimeoutMs,
      ended,
    });
  }
}

/**
 * One undici connection pool per module instance, with the API key kept in a private field.
 * Performs one HTTP exchange at a time per call; retries are decided above it.
 */
export class EmailTransport {
  readonly #dispatcher: Dispatcher;
  readonly #owned: boolean;
  readonly #authorization: string;
  readonly #options: ResolvedEmailOptions;
  /** The deadlines of this transport's exchanges in flight, on one timer. */
  readonly #deadlines = new ExchangeDeadlines();
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

  /**
   * Sends one request, reads the whole response and settles with what `read` makes of it, as soon as it
   * has come (no further turn, no promise of its own for the raw response). Rejects with our transport
   * errors, or with what `read` throws: the whole-call deadline and the caller's signal end it at any
   * stage, even while it waits for a connection.
   */
  request<C extends TransportCall, T>(call: C, ctx: CallContext, read: ReadAnswer<C, T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const { method, path } = call;
      const { signal } = ctx;
      const outcome = outcomeOf(call.createsMessage, 'not-sent');
      if (signal?.aborted) {
        throw new EmailAbortError({ method, path, cause: signal.reason, outcome });
      }
      const remaining = ctx.deadline - Date.now();
      if (remaining <= 0) {
        throw new EmailTimeoutError({
          method,
          path,
          timeoutMs: ctx.timeoutMs,
          outcome,
        });
      }
      const { connectTimeoutMs } = this.#options;
      const exchange = new Exchange(call, ctx, connectTimeoutMs, this.#deadlines, read, resolve, reject);
      exchange.arm(remaining);
      const options: Dispatcher.DispatchOptions = {
        origin: this.#options.origin,
        path: this.#options.pathPrefix + path,
        method,
        headers: this.#headers(call),
        body: call.body,
        // undici's own timers stay as a backstop behind the deadline
        headersTimeout: remaining + 1_000,
        bodyTimeout: remaining + 1_000,
      };
      try {
        this.#dispatcher.dispatch(options, exchange.reader);
      } catch (err) {
        exchange.reject(err); // undici reports through the handler; another dispatcher may throw
      }
    });
  }

  /**
   * Request headers as undici's flat list (no object to walk), made at its final size: a list that
   * grows by `push` is copied into a larger one (a send's headers cost 330 bytes that way, 130 this way).
   */
  #headers(call: TransportCall): string[] {
    const auth = this.#authorization;
    const key = call.idempotencyKey;
    if (call.body === undefined) {
      return key === undefined
        ? ['authorization', auth, 'accept', JSON_TYPE, 'user-agent', USER_AGENT]
        : ['authorization', auth, 'accept', JSON_TYPE, 'user-agent', USER_AGENT, 'idempotency-key', key];
    }
    return key === undefined
      ? ['authorization', auth, 'accept', JSON_TYPE, 'user-agent', USER_AGENT, 'content-type', JSON_TYPE]
      : [
          'authorization',
          auth,
          'accept',
          JSON_TYPE,
          'user-agent',
          USER_AGENT,
          'content-type',
          JSON_TYPE,
          'idempotency-key',
          key,
        ];
  }

  /** Closes the pool this transport created; a caller-supplied dispatcher is left alone. */
  async close(): Promise<void> {
    if (this.#closed || !this.#owned) return;
    this.#closed = true;
    await this.#dispatcher.close();
  }

  /** The pool (or the caller's dispatcher) this transport sends through: other accounts' transports share it. */
  get dispatcher(): Dispatcher {
    return this.#dispatcher;
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

import { outcomeOf } from '../policy/delivery.policy.js';
import type { IncomingHttpHeaders } from 'node:http';
import { util, type Dispatcher } from 'undici';
import { EmailUnexpectedResponseError } from '../errors/email-transport.error.js';
import type { TransportResponse } from './transport.interface.js';

/** Where a {@link ResponseReader} reports the end of its exchange: exactly one call, once. */
export interface ReadEnd {
  /** The whole response, its body decoded as UTF-8. */
  resolve(res: TransportResponse): void;
  /** An undici failure as undici gave it, or our error for a body over the cap. */
  reject(err: unknown): void;
}

type Abort = (reason: Error) => void;

/** Headers of a response not yet started (read only; replaced by the real ones). */
const NO_HEADERS: IncomingHttpHeaders = Object.freeze({});
const NO_BYTES = Buffer.alloc(0);

/**
 * An undici dispatch handler that reads a whole response into memory as UTF-8 text, refusing (and
 * discarding, by destroying the connection) a body larger than `cap` bytes, so that a broken or hostile
 * server cannot exhaust memory. No stream, no AbortSignal: it collects the chunks undici hands over.
 * It speaks both handler interfaces of undici: `onRequestStart`... (undici 7) and `onConnect`... (older
 * dispatchers and mocks).
 */
export class ResponseReader implements Dispatcher.DispatchHandler {
  #stop: Abort | undefined;
  #controller: Dispatcher.DispatchController | undefined;
  #pending: Error | undefined;
  #done = false;
  #status = 0;
  #headers: IncomingHttpHeaders = NO_HEADERS;
  /** The body so far: most answers come in one chunk, kept as it is; a list only from the second on. */
  #first: Buffer | undefined;
  #chunks: Buffer[] | undefined;
  #size = 0;

  constructor(
    private readonly cap: number,
    private readonly ctx: { method: string; path: string; createsMessage: boolean },
    private readonly end: ReadEnd,
  ) {}

  /** Ends the exchange early (deadline, caller's abort): the connection is dropped and nothing more reported. */
  cancel(reason: Error): void {
    this.#done = true;
    if (this.#controller !== undefined) this.#controller.abort(reason);
    else if (this.#stop !== undefined) this.#stop(reason);
    else this.#pending = reason; // still queued: stopped as soon as undici starts it
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    if (this.#pending !== undefined) controller.abort(this.#pending);
    else this.#controller = controller;
  }

  onResponseStart(_c: unknown, statusCode: number, headers: IncomingHttpHeaders): void {
    this.#head(statusCode, headers);
  }

  onResponseData(_c: unknown, chunk: Buffer): void {
    this.#data(chunk);
  }

  onResponseEnd(): void {
    this.#complete();
  }

  onResponseError(_c: unknown, err: Error): void {
    this.#fail(err);
  }

  onConnect(abort: Abort): void {
    if (this.#pending !== undefined) abort(this.#pending);
    else this.#stop = abort;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    if (statusCode >= 200) this.#head(statusCode, util.parseHeaders(rawHeaders) as IncomingHttpHeaders);
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.#data(chunk);
    return true;
  }

  onComplete(): void {
    this.#complete();
  }

  onError(err: Error): void {
    this.#fail(err);
  }

  #head(statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode < 200 || this.#done) return; // 1xx: informational, the answer follows
    this.#status = statusCode;
    this.#headers = headers;
    const declared = headers['content-length'];
    if (typeof declared === 'string' && Number(declared) > this.cap) this.#tooLarge();
  }

  #data(chunk: Buffer): void {
    if (this.#done) return;
    this.#size += chunk.length;
    if (this.#size > this.cap) this.#tooLarge();
    else if (this.#first === undefined) this.#first = chunk;
    else (this.#chunks ??= [this.#first]).push(chunk);
  }

  #complete(): void {
    if (this.#done) return;
    this.#done = true;
    const chunks = this.#chunks;
    const bytes = chunks !== undefined ? Buffer.concat(chunks, this.#size) : (this.#first ?? NO_BYTES);
    let text = bytes.toString('utf8');
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // a UTF-8 byte order mark is not content
    this.#first = undefined;
    this.#chunks = undefined;
    this.end.resolve({ status: this.#status, headers: this.#headers, text });
  }

  #fail(err: Error): void {
    if (this.#done) return;
    this.#done = true;
    this.#first = undefined;
    this.#chunks = undefined;
    this.end.reject(err);
  }

  #tooLarge(): void {
    const { method, path, createsMessage } = this.ctx;
    const err = new EmailUnexpectedResponseError({
      method,
      path,
      status: this.#status,
      reason: `the body is larger than ${this.cap} bytes`,
      excerpt: '',
      outcome: outcomeOf(createsMessage, 'maybe-processed'),
    });
    this.#first = undefined;
    this.#chunks = undefined;
    this.cancel(err);
    this.end.reject(err);
  }
}

import { outcomeOf } from '../policy/delivery.policy.js';
import { errorFromResponse } from './failure.parser.js';
import { EmailUnexpectedResponseError } from '../errors/email-transport.error.js';
import { RecordShapeError } from '../errors/record-shape.error.js';
import type { Redactor } from './secret-redaction.helpers.js';
import type { EmailTransport } from './email-transport.client.js';
import type { TransportResponse } from './transport.interface.js';
import type { CallContext } from '../interfaces/call-options.interface.js';

/**
 * One call of the service, described once: everything the request loop decides from (retry,
 * outcome, reconciliation) is read from here, never from the HTTP method.
 */
export interface ApiCall<T> {
  /** The operation, as logs and the observer name it (`send`, `sendBatch`, `list`, ...). */
  operation: string;
  method: 'GET' | 'POST';
  path: string;
  /** Whether the call may create a message (its errors then carry an `outcome`). */
  createsMessage: boolean;
  /** Whether the call may be repeated after an attempt that may have been processed (same key, same body). */
  idempotent: boolean;
  /** Sent as `Idempotency-Key`. */
  idempotencyKey?: string;
  /** The exact body bytes, as validated: sent as given, never serialized again. */
  body?: string | Buffer;
  /** Turns the JSON of a 2xx answer into the typed result. */
  parse: (json: unknown) => T;
}

export type { CallContext };

const EXCERPT = 200;

/**
 * Performs one attempt of an operation: one exchange, then the typed record or the typed error.
 * Retries and reconciliation are decided by the caller.
 */
export class EmailApiClient {
  constructor(
    private readonly transport: EmailTransport,
    private readonly redact: Redactor,
  ) {}

  /** `answer`, made once: the transport runs it on each response as it ends. */
  readonly #read = <T>(call: ApiCall<T>, res: TransportResponse): T => this.answer(call, res);

  attempt<T>(call: ApiCall<T>, ctx: CallContext): Promise<T> {
    // Not `async`, and no `then`: the exchange's own promise settles with the answer (no frame, no turn).
    return this.transport.request(call, ctx, this.#read);
  }

  /** The typed record of a response, or the typed error it stands for. */
  private answer<T>(call: ApiCall<T>, res: TransportResponse): T {
    const { method, path, createsMessage } = call;
    if (res.status < 200 || res.status > 299)
      throw errorFromResponse(res, { method, path, createsMessage, redact: this.redact });
    let json: unknown;
    try {
      json = JSON.parse(res.text);
    } catch {
      throw this.unexpected(call, res.status, res.text, 'the body is not JSON');
    }
    try {
      return call.parse(json);
    } catch (err) {
      if (err instanceof RecordShapeError)
        throw this.unexpected(call, res.status, res.text, err.reason(this.redact));
      throw err;
    }
  }

  private unexpected(call: ApiCall<unknown>, status: number, text: string, reason: string): Error {
    const excerpt = this.redact(text, EXCERPT); // redacted first, then cut
    return new EmailUnexpectedResponseError({
      method: call.method,
      path: call.path,
      status,
      reason,
      excerpt,
      outcome: outcomeOf(call.createsMessage, 'maybe-processed'),
    });
  }
}

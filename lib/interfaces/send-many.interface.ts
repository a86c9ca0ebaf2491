import type { CallOptions } from './call-options.interface.js';
import type { EmailLog } from './email-records.interface.js';

/**
 * What became of one item of `EmailService.sendMany`, by its index in the list given:
 * - `'sent'`: the service accepted it; `record` is its own message record;
 * - `'not-sent'`: no message can exist (refused, stopped, or its batch was never accepted); safe to send again;
 * - `'uncertain'`: its batch may have been accepted and no proof of its record was found; never send it
 *   again without looking first (`findSent`), as batches carry no idempotency key.
 * @publicApi
 */
export type SendManyResult =
  | { readonly index: number; readonly status: 'sent'; readonly record: EmailLog }
  | { readonly index: number; readonly status: 'not-sent'; readonly error: Error }
  | { readonly index: number; readonly status: 'uncertain'; readonly error: Error };

/**
 * Progress of `sendMany`, given to `onBatch` once each batch has its answer.
 * @publicApi
 */
export interface SendManyProgress {
  /** Number of this batch, from 0. */
  readonly batch: number;
  /** How many batches the call makes in all (fewer are made when it is stopped). */
  readonly batches: number;
  /** The answers of this batch's items. */
  readonly results: readonly SendManyResult[];
  /** Items answered so far, this batch included, out of `total`. */
  readonly done: number;
  readonly total: number;
}

/**
 * Options of `EmailService.sendMany`. `timeoutMs` and `maxRetries` apply to each batch (and to each
 * look-up of an uncertain batch's items); `signal` stops the call between batches (the items not yet
 * sent are answered `'not-sent'`), and also a batch still waiting for its share of `rateLimit`.
 * @publicApi
 */
export interface SendManyOptions extends CallOptions {
  /** Called once per batch with its answers; an error it throws is ignored. */
  onBatch?: (progress: SendManyProgress) => void;
}

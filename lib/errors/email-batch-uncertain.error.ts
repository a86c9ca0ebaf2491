import type { BatchEmailItem } from '../interfaces/email-input.interface.js';
import { EmailError } from './email.error.js';

/**
 * A batch whose outcome is unknown: the request went out, but no answer proved whether the service
 * accepted none, some or all of its items. Batches have no idempotency, so it was not retried.
 * Look each item up (`EmailService.findSent(item, { since: err.since })`) before sending any again:
 * send again only what the log does not hold at all (`certainty: 'none'`).
 *
 * @example
 * catch (e) {
 *   if (e instanceof EmailBatchUncertainError) {
 *     for (const item of e.items) {
 *       const { certainty } = await email.findSent(item, { since: e.since });
 *       if (certainty === 'none') await email.send(item);
 *     }
 *   }
 * }
 * @publicApi
 */
export class EmailBatchUncertainError extends EmailError {
  /** The items as they were sent (with `defaultFrom` filled in), in request order. */
  readonly items: readonly BatchEmailItem[];
  /** When the first attempt started: a message created by this batch is not older (less clock skew). */
  readonly since: Date;
  /** How many requests were made (earlier ones were refused before anything was accepted). */
  readonly attempts: number;

  constructor(init: { items: readonly BatchEmailItem[]; since: Date; attempts: number; cause: unknown }) {
    const reason = init.cause instanceof Error ? init.cause.message : String(init.cause);
    super(
      `The batch of ${init.items.length} email(s) may have been accepted in whole or in part (${reason}). ` +
        `It was not retried because batches have no idempotency; look its items up before sending them again.`,
      { retryable: false, outcome: 'uncertain', cause: init.cause },
    );
    this.items = init.items;
    this.since = init.since;
    this.attempts = init.attempts;
  }

  /** Secret-free and body-free: the items are summarised by count. */
  override toJSON(): Record<string, unknown> {
    const json = super.toJSON();
    json.items = this.items.length;
    return json;
  }
}

import type { EmailSuppressionReason } from '../interfaces/suppression.interface.js';
import { EmailError } from './email.error.js';

/**
 * One refused recipient: the address as the call gave it, and why it is suppressed.
 * @publicApi
 */
export interface EmailSuppressedAddress {
  address: string;
  reason: EmailSuppressionReason;
}

/** The reasons of `addresses`, counted: `bounced: 1, complained: 2`. */
function countReasons(addresses: readonly EmailSuppressedAddress[]): string {
  const counts = new Map<string, number>();
  for (const { reason } of addresses) counts.set(reason, (counts.get(reason) ?? 0) + 1);
  return [...counts].map(([reason, n]) => `${reason}: ${n}`).join(', ');
}

/**
 * A send refused before any request (and a job refused before anything was written) because recipients
 * are on the suppression list: they bounced, complained, unsubscribed or were put there by hand. Nothing
 * was sent (`outcome: 'not-sent'`); sending it again is refused the same way until they are removed.
 * `addresses` names them with their reasons; the message counts them only, so that logs that print it
 * show no address.
 *
 * @example
 * catch (e) { if (e instanceof EmailSuppressedError) markUndeliverable(e.addresses.map((a) => a.address)); }
 * @publicApi
 */
export class EmailSuppressedError extends EmailError {
  /** The suppressed recipients, as the call gave them, with their reasons. */
  readonly addresses: readonly EmailSuppressedAddress[];
  /** `sendBatch` and the job layer: the indexes of the items that hold them. */
  readonly items?: readonly number[];

  constructor(init: { addresses: readonly EmailSuppressedAddress[]; items?: readonly number[] }) {
    const n = init.addresses.length;
    const where = init.items === undefined ? '' : ` in ${init.items.length} of the items`;
    super(
      `Not sent: ${n} recipient${n === 1 ? ' is' : 's are'} suppressed${where} (${countReasons(init.addresses)}). ` +
        'They are named in .addresses; remove them from the suppression list (EmailSuppressions.remove) to mail them again.',
      { retryable: false, outcome: 'not-sent' },
    );
    this.addresses = init.addresses.map(({ address, reason }) => ({ address, reason }));
    if (init.items !== undefined) this.items = [...init.items];
  }
}

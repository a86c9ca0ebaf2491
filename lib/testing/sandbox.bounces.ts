import type { SandboxStore, StoredMessage } from './sandbox.store.js';

/**
 * What a provider's log says of a message to an address that bounced or complained. The contract lists
 * `bounced` and `complained` among its lifecycle events, and a record's `status` is a free string: the
 * sandbox writes these two words.
 * @publicApi
 */
export type SandboxBounceStatus = 'bounced' | 'complained';

/**
 * An address a mailbox makes bounce or complain.
 * @publicApi
 */
export interface SandboxBounce {
  /** The address as the mailbox compares it: lower case, no display name. */
  address: string;
  status: SandboxBounceStatus;
}

/** The error text a bounced record carries (a complaint keeps none: the message was delivered). */
export const BOUNCE_ERROR = 'the recipient server refused the message (sandbox bounce)';

/** A recipient as the mailbox compares it: the address inside `<…>` when there is one, lower case. */
export function bounceKey(recipient: string): string {
  const s = recipient.trim();
  const open = s.endsWith('>') ? s.lastIndexOf('<') : -1;
  return (open >= 0 ? s.slice(open + 1, -1) : s).trim().toLowerCase();
}

/**
 * The addresses one mailbox makes bounce or complain: a message to one of them is accepted as any other
 * (its create answer says `sent` or `scheduled`), and its record reads `bounced` or `complained` once it is
 * sent, as a provider's log would after the recipient's server answered. The first such recipient of a
 * message decides its status.
 */
export class SandboxBounces {
  private readonly byAddress = new Map<string, SandboxBounceStatus>();

  /** Marks `address`; with `existing`, the sent records of `store` to it read so too. */
  mark(
    address: string,
    status: SandboxBounceStatus,
    existing: boolean,
    store: SandboxStore,
    now: number,
  ): void {
    const key = bounceKey(address);
    if (!/^[^@\s]+@[^@\s]+$/.test(key))
      throw new TypeError(`${JSON.stringify(address)} is not an email address`);
    this.byAddress.set(key, status);
    if (existing)
      for (const m of store.all())
        if (m.detail.toAddresses.some((r) => bounceKey(r) === key)) this.apply(m, now);
    store.touch();
  }

  /** Stops marking `address`; answers whether it was marked. Records already changed stay as they are. */
  clear(address: string): boolean {
    return this.byAddress.delete(bounceKey(address));
  }

  list(): SandboxBounce[] {
    return [...this.byAddress].map(([address, status]) => ({ address, status }));
  }

  /** Forgets every address. */
  reset(): void {
    this.byAddress.clear();
  }

  /**
   * Gives a sent message the status of its first marked recipient (and the time it changed); answers
   * whether it changed. A scheduled message is left until it is sent.
   */
  apply(msg: StoredMessage, now: number): boolean {
    if (this.byAddress.size === 0 || msg.detail.status !== 'sent') return false;
    for (const recipient of msg.detail.toAddresses) {
      const status = this.byAddress.get(bounceKey(recipient));
      if (status === undefined) continue;
      msg.detail.status = status;
      msg.detail.errorMessage = status === 'bounced' ? BOUNCE_ERROR : null;
      msg.detail.updatedAt = new Date(now).toISOString();
      return true;
    }
    return false;
  }
}

import type { BatchEmailItem } from '../interfaces/email-input.interface.js';
import type { EmailLog } from '../interfaces/email-records.interface.js';
import type { OpenSend } from './claimed-records.store.js';

/**
 * Clock-skew allowance of a look-up: a record created up to this long before `since` still matches,
 * because `createdAt` comes from the service's clock and `since` from ours.
 * @publicApi
 */
export const FIND_SENT_SKEW_MS = 2_000;

/** Records fetched by one look-up: the most `GET /emails` returns. */
export const FIND_SENT_LIMIT = 100;

/** What a record must show to be taken for a given send. */
export interface SentCriteria {
  from: string;
  /** Sorted, lower-cased, without duplicates. */
  to: string[];
  /** Exact subject for an inline send; undefined in template mode (the rendered subject is not known). */
  subject?: string;
  /** Epoch ms: records created before this (skew already deducted) do not match. */
  notBefore: number;
}

/** The address part of `Name <addr>` or a bare address, lower-cased. */
export function addressOf(value: string): string {
  const open = value.lastIndexOf('<');
  const close = value.lastIndexOf('>');
  const bare = open >= 0 && close > open ? value.slice(open + 1, close) : value;
  return bare.trim().toLowerCase();
}

function addressSet(values: readonly string[]): string[] {
  return [...new Set(values.map(addressOf))].sort();
}

/** The criteria of a send made at or after `since`; `from` must already hold the default sender. */
export function sentCriteria(input: BatchEmailItem, since: Date): SentCriteria {
  const templated = input.templateId !== undefined && input.templateId !== null;
  return {
    from: addressOf(input.from ?? ''),
    to: addressSet(input.to),
    subject: templated ? undefined : input.subject,
    notBefore: since.getTime() - FIND_SENT_SKEW_MS,
  };
}

/**
 * The look-up of one send: its criteria, worked out on first use and kept (most sends are never looked
 * up, so they never pay for it), and its signature, the text identical sends share. As an `OpenSend`
 * it also carries whether it waits for (or runs) a look-up. `input` must not change afterwards (the
 * request loop is given its own snapshot).
 */
export class SentLookup implements OpenSend {
  reconciling = false;
  private criteriaOnce: SentCriteria | undefined;
  private signatureOnce: string | undefined;

  constructor(
    private readonly input: BatchEmailItem,
    /** Epoch ms the send started at. */
    private readonly since: number,
  ) {}

  criteria(): SentCriteria {
    return (this.criteriaOnce ??= sentCriteria(this.input, new Date(this.since)));
  }

  /** The criteria without their time, as one string. */
  signature(): string {
    if (this.signatureOnce === undefined) {
      const { from, to, subject } = this.criteria();
      this.signatureOnce = JSON.stringify([from, to, subject ?? null]);
    }
    return this.signatureOnce;
  }
}

/** Whether `record` can be the message of the send `criteria` describe. */
export function matchesSent(record: EmailLog, criteria: SentCriteria): boolean {
  if (record.createdAt.getTime() < criteria.notBefore) return false;
  if (criteria.subject !== undefined && record.subject !== criteria.subject) return false;
  if (addressOf(record.fromAddress) !== criteria.from) return false;
  const to = addressSet(record.toAddresses);
  return to.length === criteria.to.length && to.every((address, i) => address === criteria.to[i]);
}

/**
 * The earliest-created matching record that `skip` does not exclude, or null. The list's order is
 * not part of the contract, so every record is examined.
 */
export function pickSent(
  records: readonly EmailLog[],
  criteria: SentCriteria,
  skip?: (record: EmailLog) => boolean,
): EmailLog | null {
  let best: EmailLog | null = null;
  for (const record of records) {
    if (!matchesSent(record, criteria) || skip?.(record)) continue;
    if (best === null || record.createdAt.getTime() < best.createdAt.getTime()) best = record;
    else if (record.createdAt.getTime() === best.createdAt.getTime() && record.id < best.id) best = record;
  }
  return best;
}

import type { BatchEmailItem } from '../interfaces/email-input.interface.js';
import type { EmailDetail, EmailLog } from '../interfaces/email-records.interface.js';
import { OpenSend } from './identical-sends.store.js';

/**
 * Clock-skew allowance of a look-up: a record created up to this long before `since` still matches,
 * because `createdAt` comes from the service's clock and `since` from ours.
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

/** Whether `input` is a template send. */
export function isTemplated(input: BatchEmailItem): boolean {
  return input.templateId !== undefined && input.templateId !== null;
}

/** The criteria of a send made at or after `since`; `from` must already hold the default sender. */
export function sentCriteria(input: BatchEmailItem, since: Date): SentCriteria {
  const templated = isTemplated(input);
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
 * it also carries whether it waits for (or runs) a look-up. Its email is an input that must not change
 * afterwards, or the exact JSON body of a send, read back on first use: a send in flight then holds its
 * bytes (kept for its retries anyway) and no second copy of its email, which its checked snapshot would
 * otherwise be for as long as the request runs (long enough for the old generation to take it).
 */
export class SentLookup extends OpenSend {
  private criteriaOnce: SentCriteria | undefined;
  private signatureOnce: string | undefined;
  private inputOnce: BatchEmailItem | undefined;

  constructor(
    /** The email, or the exact JSON body sent for it. */
    private readonly email: BatchEmailItem | string,
    /** Epoch ms the send started at. */
    private readonly since: number,
  ) {
    super();
  }

  /** The email, read from the body the first time when it was given as one (what was sent is what is matched). */
  private get input(): BatchEmailItem {
    const { email } = this;
    if (typeof email !== 'string') return email;
    return (this.inputOnce ??= JSON.parse(email) as BatchEmailItem);
  }

  /**
   * Whether a record's content can show that it is this send's message: an inline send knows its
   * html and text; a template send does not (the service renders it), so no look-up can prove it.
   */
  provable(): boolean {
    return !isTemplated(this.input);
  }

  /** Whether `detail` carries this send's own content (see {@link contentMatches}). */
  carries(detail: EmailDetail): boolean {
    return contentMatches(detail, this.input);
  }

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

/** Line ends as `\n`, runs of blanks as one space, no blanks at either end. */
function normalizeBody(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t\n\f\v]+/g, ' ')
    .trim();
}

const IMAGE_TAG = /<img\b[^>]*>/gi;
const LINK_TARGET = /(<a\b[^>]*?\bhref\s*=\s*)(["'])[^"']*\2/gi;

/**
 * The html as tracking leaves it comparable: every image tag dropped (an open pixel is one) and every
 * link target blanked (click tracking rewrites them), blanks normalized. Applied to both sides.
 */
function withoutTracking(html: string): string {
  return normalizeBody(html.replace(IMAGE_TAG, '').replace(LINK_TARGET, '$1$2$2'));
}

/**
 * Whether the message `detail` carries the inline content of `input`: its text exactly (line ends and
 * blanks normalized), and its html exactly, or, when the record says tracking is on, equal once what
 * tracking adds (an image, rewritten link targets) is set aside on both sides. A field the input does
 * not set is not compared (the service may derive one body from the other). A template input never
 * matches: its rendered content is the service's.
 */
export function contentMatches(detail: EmailDetail, input: BatchEmailItem): boolean {
  if (isTemplated(input)) return false;
  // An empty body is no body (the service may store it as null).
  const text = input.text || null;
  const html = input.html || null;
  if (text === null && html === null) return false;
  if (text !== null && (detail.bodyText === null || normalizeBody(detail.bodyText) !== normalizeBody(text))) {
    return false;
  }
  if (html !== null) {
    if (detail.html === null) return false;
    const tracked = detail.trackOpens || detail.trackClicks;
    const ours = tracked ? withoutTracking(html) : normalizeBody(html);
    const theirs = tracked ? withoutTracking(detail.html) : normalizeBody(detail.html);
    if (ours !== theirs) return false;
  }
  return true;
}

/**
 * Every matching record that `skip` does not exclude, earliest created first (ties by id). The list's
 * order is not part of the contract, so every record is examined.
 */
export function lookAlikes(
  records: readonly EmailLog[],
  criteria: SentCriteria,
  skip?: (record: EmailLog) => boolean,
): EmailLog[] {
  const found = records.filter((record) => matchesSent(record, criteria) && !skip?.(record));
  return found.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id - b.id);
}

import type { SandboxCore } from '../sandbox.core.js';
import { SandboxHttpError } from '../sandbox.http.js';
import type { StoredMessage } from '../sandbox.store.js';
import { trackingRefusal } from '../sandbox.tracking.js';
import { isRead, unreadCount } from './page.reads.js';
import { accountName, parseSearch, searchMatches, type SearchableExtras } from './page.search.js';

/** A row of the page's message list. */
export interface MessageRow {
  id: number;
  fromAddress: string;
  toAddresses: string[];
  subject: string;
  status: string;
  createdAt: string;
  scheduledAt: string | null;
  openCount: number;
  clickCount: number;
  attachments: number;
  /** Whether the page has shown it (opening a message marks it read). */
  read: boolean;
  /** The account name the sandbox was given for the key that sent it; null when the key is its own account. */
  account: string | null;
  templateId: number | null;
  /** Its tags (`job:<id>` among them for a job's message). */
  tags: readonly string[];
}

/** The values the page's filters offer: those the mailbox's messages hold, newest first (200 of each at most). */
export interface MessageFacets {
  accounts: string[];
  templates: number[];
  jobs: string[];
}

/** One slice of the page's message list, newest first (`limit` rows before `before`). */
export interface MessageList {
  /** Messages held in all. */
  total: number;
  /** Messages that match the search (all of them without one). */
  matched: number;
  /** Messages held that the page has not shown yet. */
  unread: number;
  items: MessageRow[];
  /** Whether older matches follow the last item (ask again with `before` = its id). */
  more: boolean;
  /** Words of the search that could not be used (left out of it), each with what was expected. */
  problems: string[];
  facets: MessageFacets;
}

const MAX_FACETS = 200;

const DIGITS = /^\d{1,15}$/;

function searchable(core: SandboxCore, m: StoredMessage): SearchableExtras {
  const extras = core.extras.of(m);
  return {
    account: accountName(core, m),
    templateId: extras.templateId,
    attachments: extras.attachments.length,
    tags: core.tags.of(m),
  };
}

function row(core: SandboxCore, m: StoredMessage): MessageRow {
  const d = m.detail;
  const x = searchable(core, m);
  return {
    id: d.id,
    fromAddress: d.fromAddress,
    toAddresses: d.toAddresses,
    subject: d.subject,
    status: d.status,
    createdAt: d.createdAt,
    scheduledAt: d.scheduledAt,
    openCount: d.openCount,
    clickCount: d.clickCount,
    attachments: x.attachments,
    read: isRead(m),
    account: x.account,
    templateId: x.templateId,
    tags: [...x.tags],
  };
}

/** Adds a message's account, template and job to the filters' values, until each holds `MAX_FACETS`. */
function collect(facets: MessageFacets, seen: Set<string>, x: SearchableExtras): void {
  const add = <T>(list: T[], kind: string, value: T) => {
    if (list.length >= MAX_FACETS || seen.has(`${kind}\u0000${value}`)) return;
    seen.add(`${kind}\u0000${value}`);
    list.push(value);
  };
  if (x.account !== null) add(facets.accounts, 'a', x.account);
  if (x.templateId !== null) add(facets.templates, 't', x.templateId);
  for (const tag of x.tags) if (tag.startsWith('job:')) add(facets.jobs, 'j', tag.slice(4));
}

/**
 * `GET api/messages?q=&tz=&before=&limit=`: every account's messages, newest first, searched with the
 * page's search words (`parseSearch`; `tz`: the page's time zone, minutes east of UTC, for dates), paged
 * by id on the server so that 100,000 messages stay quick; with the values the filters offer.
 */
export function listPage(core: SandboxCore, query: URLSearchParams): MessageList {
  core.tick();
  const offset = signedParam(query, 'tz', 0, 14 * 60);
  const { terms, problems } = parseSearch(query.get('q') ?? '', offset);
  const limit = intParam(query, 'limit', 50, 1, 500);
  const before = intParam(query, 'before', Number.MAX_SAFE_INTEGER, 1, Number.MAX_SAFE_INTEGER);
  const all = core.store.all();
  const items: MessageRow[] = [];
  const facets: MessageFacets = { accounts: [], templates: [], jobs: [] };
  const seen = new Set<string>();
  let matched = 0;
  for (let i = all.length - 1; i >= 0; i--) {
    const m = all[i];
    let x: SearchableExtras | undefined;
    const extras = () => (x ??= searchable(core, m));
    if (seen.size < 3 * MAX_FACETS) collect(facets, seen, extras());
    if (terms.length > 0 && !searchMatches(m, extras, terms)) continue;
    matched++;
    if (m.detail.id < before && items.length <= limit) items.push(row(core, m));
  }
  const more = items.length > limit;
  const page = items.slice(0, limit);
  return { total: all.length, matched, unread: unreadCount(core), items: page, more, problems, facets };
}

/** The message with this path id (any account); 400 for a non-integer, 404 when it is not held. */
export function findHeld(core: SandboxCore, idText: string): StoredMessage {
  if (!DIGITS.test(idText)) throw new SandboxHttpError(400, 'message id must be an integer');
  core.tick();
  const msg = core.store.get(Number(idText));
  if (!msg) {
    throw new SandboxHttpError(
      404,
      `email ${idText} is not in the sandbox (reset, or forgotten past maxMessages)`,
    );
  }
  return msg;
}

/** `GET api/messages/:id`: the record, text, extras, tracking state and events (newest first). */
export function messageView(core: SandboxCore, msg: StoredMessage): object {
  const { html, ...record } = msg.detail;
  const extras = core.extras.of(msg);
  return {
    ...record,
    toAddresses: [...record.toAddresses],
    hasHtml: html !== null,
    dueAt: msg.dueAt === null ? null : new Date(msg.dueAt).toISOString(),
    account: accountName(core, msg),
    tags: [...core.tags.of(msg)],
    templateId: extras.templateId,
    variables: extras.variables,
    attachments: extras.attachments.map((a, index) => ({
      index,
      filename: a.filename,
      contentType: a.contentType,
      size: a.size,
      kept: a.content !== null,
    })),
    tracking: {
      open: trackingRefusal(msg, 'open'),
      click: trackingRefusal(msg, 'click'),
      links: [...msg.links],
    },
    events: [...msg.events].reverse(),
  };
}

/** A whole number from -`bound` to `bound` (the page's time zone offset); `fallback` when left out. */
function signedParam(query: URLSearchParams, name: string, fallback: number, bound: number): number {
  const raw = query.get(name);
  if (raw === null || raw === '') return fallback;
  const n = /^-?\d{1,5}$/.test(raw) ? Number(raw) : NaN;
  if (!(Math.abs(n) <= bound))
    throw new SandboxHttpError(400, `${name} must be an integer from -${bound} to ${bound}`);
  return n;
}

function intParam(query: URLSearchParams, name: string, fallback: number, min: number, max: number): number {
  const raw = query.get(name);
  if (raw === null || raw === '') return fallback;
  const n = DIGITS.test(raw) ? Number(raw) : NaN;
  if (!(n >= min && n <= max))
    throw new SandboxHttpError(400, `${name} must be an integer from ${min} to ${max}`);
  return n;
}

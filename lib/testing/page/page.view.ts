import type { SandboxCore } from '../sandbox.core.js';
import { SandboxHttpError } from '../sandbox.http.js';
import type { StoredMessage } from '../sandbox.store.js';
import { trackingRefusal } from '../sandbox.tracking.js';
import { isRead, unreadCount } from './page.reads.js';

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
}

const DIGITS = /^\d{1,15}$/;

function row(core: SandboxCore, m: StoredMessage): MessageRow {
  const d = m.detail;
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
    attachments: core.extras.of(m).attachments.length,
    read: isRead(m),
  };
}

/** Whether `q` (lower case) is in the sender, a recipient, the subject or the text body. */
function matches(m: StoredMessage, q: string): boolean {
  const d = m.detail;
  if (d.subject.toLowerCase().includes(q) || d.fromAddress.toLowerCase().includes(q)) return true;
  if (d.toAddresses.some((to) => to.toLowerCase().includes(q))) return true;
  return d.bodyText !== null && d.bodyText.toLowerCase().includes(q);
}

/**
 * `GET api/messages?q=&before=&limit=`: every account's messages, newest first, searched by sender,
 * recipient, subject or text body (case-insensitive), paged by id on the server so that 100,000
 * messages stay quick.
 */
export function listPage(core: SandboxCore, query: URLSearchParams): MessageList {
  core.tick();
  const q = (query.get('q') ?? '').trim().toLowerCase();
  const limit = intParam(query, 'limit', 50, 1, 500);
  const before = intParam(query, 'before', Number.MAX_SAFE_INTEGER, 1, Number.MAX_SAFE_INTEGER);
  const all = core.store.all();
  const items: MessageRow[] = [];
  let matched = 0;
  for (let i = all.length - 1; i >= 0; i--) {
    const m = all[i];
    if (q && !matches(m, q)) continue;
    matched++;
    if (m.detail.id < before && items.length <= limit) items.push(row(core, m));
  }
  const more = items.length > limit;
  return { total: all.length, matched, unread: unreadCount(core), items: items.slice(0, limit), more };
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

function intParam(query: URLSearchParams, name: string, fallback: number, min: number, max: number): number {
  const raw = query.get(name);
  if (raw === null || raw === '') return fallback;
  const n = DIGITS.test(raw) ? Number(raw) : NaN;
  if (!(n >= min && n <= max))
    throw new SandboxHttpError(400, `${name} must be an integer from ${min} to ${max}`);
  return n;
}

import type { SandboxCore } from '../sandbox.core.js';
import { SandboxHttpError } from '../sandbox.http.js';
import type { StoredMessage } from '../sandbox.store.js';

/**
 * Which messages the page has shown (read), as a mail client keeps it: page state only, never part of the
 * service's contract. Held by message, not by id, so a reset or clear (which makes new messages with the same
 * ids) starts every message unread.
 */
const readMessages = new WeakSet<StoredMessage>();

/** Whether the page has shown `msg`. */
export const isRead = (msg: StoredMessage): boolean => readMessages.has(msg);

const MAX_IDS = 1000;

/** The `ids` of an action's body: a non-empty array of message ids (positive integers), at most 1,000. */
export function idsOf(body: unknown): number[] {
  const ids = (body as { ids?: unknown } | null)?.ids;
  if (!Array.isArray(ids) || ids.length === 0 || ids.length > MAX_IDS) {
    throw new SandboxHttpError(
      400,
      `ids must be an array of 1 to ${MAX_IDS} message ids, e.g. {"ids":[3,4]}`,
    );
  }
  const bad = ids.filter((id) => !(Number.isSafeInteger(id) && (id as number) > 0));
  if (bad.length > 0) {
    throw new SandboxHttpError(
      400,
      `ids must be positive integers; not one: ${JSON.stringify(bad.slice(0, 3))}`,
    );
  }
  return [...new Set(ids as number[])];
}

/** `POST api/messages/read` `{ ids, read? }` (read defaults to true): marks them; answers the mailbox's unread count. */
export function markRead(core: SandboxCore, body: unknown): { unread: number } {
  const ids = idsOf(body);
  const read = (body as { read?: unknown }).read ?? true;
  if (typeof read !== 'boolean') throw new SandboxHttpError(400, 'read must be true or false');
  for (const id of ids) {
    const msg = core.store.get(id);
    if (!msg) continue;
    if (read) readMessages.add(msg);
    else readMessages.delete(msg);
  }
  return { unread: unreadCount(core) };
}

/** `POST api/messages/delete` `{ ids }`: removes those held; answers how many went and which were not held. */
export function deleteMessages(
  core: SandboxCore,
  body: unknown,
): { deleted: number; missing: number[]; messages: number } {
  const ids = idsOf(body);
  const missing: number[] = [];
  let deleted = 0;
  for (const id of ids) {
    if (!core.store.get(id)) {
      missing.push(id);
      continue;
    }
    core.store.remove(id);
    deleted++;
  }
  return { deleted, missing, messages: core.store.size };
}

/** How many messages of `core` the page has not shown yet. */
export function unreadCount(core: SandboxCore): number {
  let unread = 0;
  for (const m of core.store.all()) if (!readMessages.has(m)) unread++;
  return unread;
}

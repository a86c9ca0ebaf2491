import type { SandboxCore } from './sandbox.core.js';
import { SandboxHttpError, type SandboxReply } from './sandbox.http.js';
import type { ResolvedSandboxKey } from './sandbox.options.js';
import { copyDetail, toLog } from './sandbox.records.js';
import type { StoredMessage } from './sandbox.store.js';

const DIGITS = /^\d{1,15}$/;

/** GET /emails?limit=N: the account's messages, newest first; limit 1 to 100, default 50. */
export function listEmails(core: SandboxCore, key: ResolvedSandboxKey, query: string): SandboxReply {
  let limit = 50;
  if (query) {
    const raw = new URLSearchParams(query).getAll('limit');
    if (raw.length > 1) throw new SandboxHttpError(400, 'limit may be given once');
    if (raw.length === 1) {
      limit = DIGITS.test(raw[0]) ? Number(raw[0]) : NaN;
      if (!(limit >= 1 && limit <= 100)) {
        throw new SandboxHttpError(400, 'limit must be an integer from 1 to 100');
      }
    }
  }
  return { status: 200, body: core.store.list(key.account, limit).map((m) => toLog(m.detail)) };
}

/** The account's message with this path id; 400 for a non-integer id, 404 when unknown. */
export function findMessage(core: SandboxCore, key: ResolvedSandboxKey, idText: string): StoredMessage {
  if (!DIGITS.test(idText)) throw new SandboxHttpError(400, 'id must be an integer');
  const msg = core.store.get(Number(idText), key.account);
  if (!msg) throw new SandboxHttpError(404, `email ${idText} not found`);
  return msg;
}

/** GET /emails/{id}: the record with its bodies. */
export function getEmail(core: SandboxCore, key: ResolvedSandboxKey, idText: string): SandboxReply {
  return { status: 200, body: copyDetail(findMessage(core, key, idText).detail) };
}

/** GET /emails/{id}/events: opens and clicks, newest first. */
export function listEvents(core: SandboxCore, key: ResolvedSandboxKey, idText: string): SandboxReply {
  const events = findMessage(core, key, idText).events;
  const out = new Array(events.length);
  for (let i = 0; i < events.length; i++) out[i] = events[events.length - 1 - i];
  return { status: 200, body: out };
}

import type { SandboxBounce } from '../sandbox.bounces.js';
import type { SandboxCore } from '../sandbox.core.js';
import type { SandboxFaultRule, SandboxRoute } from '../sandbox.fault.types.js';
import { SandboxHttpError } from '../sandbox.http.js';
import type { SandboxEmailEvent } from '../sandbox.records.js';
import type { StoredMessage } from '../sandbox.store.js';
import { trackingRefusal } from '../sandbox.tracking.js';

const ROUTES: SandboxRoute[] = [
  'POST /emails',
  'POST /emails/batch',
  'GET /emails',
  'GET /emails/:id',
  'GET /emails/:id/events',
];
const DAY_MS = 86_400_000;
const bad = (message: string) => new SandboxHttpError(400, message);
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** `POST api/messages/:id/open` and `…/click` (`{ url? }`, default the first tracked link). */
export function recordEvent(
  core: SandboxCore,
  msg: StoredMessage,
  type: 'open' | 'click',
  body: unknown,
): SandboxEmailEvent {
  const now = core.tick();
  const refusal = trackingRefusal(msg, type);
  if (refusal) throw new SandboxHttpError(409, refusal);
  if (type === 'open') return core.store.addEvent(msg, 'open', null, now);
  const url = isObject(body) && body.url !== undefined && body.url !== null ? body.url : msg.links[0];
  if (typeof url !== 'string' || !msg.links.includes(url)) {
    throw bad(`url must be one of the message's tracked links (${msg.links.length} of them)`);
  }
  return core.store.addEvent(msg, 'click', url, now);
}

/** `POST api/clock`: `{ advanceMs }` (-30 to +30 days) or `{ to }` (an ISO date-time); answers the new time. */
export function moveClock(core: SandboxCore, body: unknown): { now: string } {
  if (!isObject(body))
    throw bad('body must be a JSON object: { "advanceMs": 3600000 } or { "to": "<date-time>" }');
  if (body.advanceMs !== undefined) {
    const ms = body.advanceMs;
    if (typeof ms !== 'number' || !Number.isInteger(ms) || Math.abs(ms) > 30 * DAY_MS) {
      throw bad('advanceMs must be an integer number of milliseconds, at most 30 days either way');
    }
    core.clock.advance(ms);
  } else if (typeof body.to === 'string' && Number.isFinite(Date.parse(body.to))) {
    core.clock.set(body.to);
  } else {
    throw bad('give advanceMs (milliseconds) or to (an ISO 8601 date-time)');
  }
  return { now: new Date(core.tick()).toISOString() };
}

/**
 * `POST api/faults`: `{ route?, mode, status?, ms?, times? }` becomes a scripted fault. `times` is a
 * positive integer or `"all"`; `status` is 429/500/502/503 (`status` mode) or 500/502/503 (`fail-after`).
 */
export function faultRule(body: unknown): SandboxFaultRule {
  if (!isObject(body)) throw bad('body must be a JSON object describing the fault');
  const route = body.route ?? '*';
  if (route !== '*' && !ROUTES.includes(route as SandboxRoute)) {
    throw bad(`route must be "*" or one of ${ROUTES.join(', ')}`);
  }
  const times = body.times ?? 1;
  if (times !== 'all' && !(Number.isInteger(times) && (times as number) >= 1)) {
    throw bad('times must be a positive integer or "all"');
  }
  const target = {
    route: route as SandboxRoute | '*',
    times: times === 'all' ? Infinity : (times as number),
  };
  const status = body.status;
  switch (body.mode) {
    case 'status':
      if (![429, 500, 502, 503].includes(status as number)) throw bad('status must be 429, 500, 502 or 503');
      return { ...target, mode: 'status', status: status as 429 | 500 | 502 | 503 };
    case 'fail-after':
      if (status !== undefined && ![500, 502, 503].includes(status as number)) {
        throw bad('status of fail-after must be 500, 502 or 503');
      }
      return { ...target, mode: 'fail-after', status: (status ?? 500) as 500 | 502 | 503 };
    case 'delay': {
      const ms = body.ms;
      if (typeof ms !== 'number' || !Number.isInteger(ms) || ms < 0 || ms > 600_000) {
        throw bad('ms must be an integer from 0 to 600000');
      }
      return { ...target, mode: 'delay', ms };
    }
    case 'drop-before':
    case 'drop-after':
    case 'hang':
      return { ...target, mode: body.mode };
    default:
      throw bad('mode must be status, delay, hang, drop-before, drop-after or fail-after');
  }
}

/** `POST api/bounces`: `{ address, status: 'bounced' | 'complained', existing? }`; answers the mailbox's list. */
export function addBounce(core: SandboxCore, body: unknown): SandboxBounce[] {
  if (!isObject(body) || typeof body.address !== 'string')
    throw bad('body must be a JSON object: { "address": "someone@example.com", "status": "bounced" }');
  const status = body.status ?? 'bounced';
  if (status !== 'bounced' && status !== 'complained') throw bad('status must be "bounced" or "complained"');
  if (body.existing !== undefined && typeof body.existing !== 'boolean')
    throw bad('existing must be a boolean');
  try {
    core.bounces.mark(body.address, status, body.existing === true, core.store, core.tick());
  } catch (err) {
    throw bad((err as Error).message);
  }
  return core.bounces.list();
}

/** `POST api/bounces/remove`: `{ address }`; answers the mailbox's list. */
export function removeBounce(core: SandboxCore, body: unknown): SandboxBounce[] {
  if (!isObject(body) || typeof body.address !== 'string')
    throw bad('body must be a JSON object: { "address": "…" }');
  if (!core.bounces.clear(body.address))
    throw new SandboxHttpError(404, 'that address does not bounce or complain');
  core.store.touch();
  return core.bounces.list();
}

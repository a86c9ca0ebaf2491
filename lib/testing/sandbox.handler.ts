import type { IncomingMessage, ServerResponse } from 'node:http';
import { authenticate } from './sandbox.auth.js';
import type { SandboxCore } from './sandbox.core.js';
import type { SandboxFault } from './sandbox.fault.types.js';
import { errorReply, readBody, writeReply, type SandboxReply } from './sandbox.http.js';
import { getEmail, listEmails, listEvents } from './sandbox.read.js';
import type { LoggedRequest } from './sandbox.requests.js';
import { sendBatch, sendOne } from './sandbox.send.js';
import type { SandboxRegistry } from './sandbox.registry.js';
import { match, notFound, type Matched } from './sandbox.routes.js';
import { handleAdmin } from './sandbox-admin.handler.js';
import { handleMailboxes } from './sandbox-mailboxes.handler.js';
import { foreignRequest } from './page/page.guard.js';
import { hostRefusal } from './sandbox.host.js';
import { createPage } from './page/page.router.js';

/** Runs the operation of a route; every failure becomes its `{ error }` reply. */
function operate(
  core: SandboxCore,
  req: IncomingMessage,
  m: Matched,
  raw: Buffer,
  json: unknown,
  query: string,
) {
  try {
    const now = core.tick();
    const key = authenticate(core, req.headers.authorization);
    core.rate?.take(key.key, 1, now);
    if (m.route === 'GET /emails') return listEmails(core, key, query);
    if (m.route === 'GET /emails/:id') return getEmail(core, key, m.id);
    if (m.route === 'GET /emails/:id/events') return listEvents(core, key, m.id);
    const idem = req.headers['idempotency-key'];
    const send = {
      method: 'POST',
      path: req.url ?? '',
      raw,
      json,
      idempotencyKey: idem as string | undefined,
    };
    return m.route === 'POST /emails' ? sendOne(core, key, send, now) : sendBatch(core, key, send, now);
  } catch (err) {
    return errorReply(err);
  }
}

/**
 * The sandbox's request listener: contract routes (with request log and faults), each served by the
 * mailbox its API key belongs to, plus tracking and admin routes under `/__sandbox/`. Every route first
 * refuses a foreign `Host` and a cross-site write (`hostRefusal`, with the `allowedHosts` option); a
 * contract request whose key no mailbox holds is answered 401 before any mailbox sees it.
 */
export function createRouter(
  registry: SandboxRegistry,
  timers: Set<NodeJS.Timeout>,
  allowedHosts: readonly string[] = [],
) {
  const server = registry.default;
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        timers.delete(t);
        resolve();
      }, ms);
      timers.add(t);
    });

  const respond = (res: ServerResponse, entry: LoggedRequest | null, reply: SandboxReply) => {
    if (!res.destroyed) {
      writeReply(res, reply);
      if (entry) entry.status = reply.status;
    }
    reply.finish?.();
  };

  const page = createPage(registry, timers);

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const refused = hostRefusal(req, allowedHosts);
    if (refused) {
      req.resume();
      return respond(res, null, { status: 403, body: { error: refused } });
    }
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    let path = q < 0 ? url : url.slice(0, q);
    const query = q < 0 ? '' : url.slice(q + 1);
    if (server.basePath) {
      if (path !== server.basePath && !path.startsWith(server.basePath + '/')) {
        return respond(res, null, notFound());
      }
      path = path.slice(server.basePath.length);
    }
    const method = req.method ?? 'GET';
    if (path.startsWith('/__sandbox/')) {
      const refusal = path.startsWith('/__sandbox/track/') ? null : foreignRequest(req);
      if (refusal) {
        req.resume();
        return respond(res, null, { status: 403, body: { error: refusal } });
      }
      if (server.admin && /^\/__sandbox\/outbox(\/|$)/.test(path))
        return page(req, res, path.slice(17), query);
      if (server.admin && /^\/__sandbox\/mailboxes(\/|$)/.test(path)) {
        const baseUrl = `http://${req.headers.host}${server.basePath}`;
        const reply = await handleMailboxes(registry, req, path.slice(11), baseUrl).catch(errorReply);
        return respond(res, null, reply);
      }
      req.resume();
      return respond(res, null, handleAdmin(registry, method, path.slice(11)));
    }
    const m = match(method, path);
    if (!('route' in m)) {
      req.resume();
      return respond(res, null, m);
    }
    const core = registry.forAuthorization(req.headers.authorization);
    if (core === null) {
      req.resume();
      const missing = !/^bearer ./i.test(req.headers.authorization ?? '');
      const error = missing ? 'missing bearer credentials' : 'invalid API key';
      return respond(res, null, { status: 401, body: { error } });
    }
    let raw: Buffer;
    try {
      raw = await readBody(req, core.maxBodyBytes);
    } catch (err) {
      return respond(res, null, errorReply(err));
    }
    let json: unknown;
    if (raw.length > 0) {
      try {
        json = JSON.parse(raw.toString('utf8'));
      } catch {
        json = undefined;
      }
    }
    const fault = core.faults.pick(m.route);
    const entry: LoggedRequest = {
      method,
      path: url,
      headers: req.headers,
      raw,
      receivedAt: core.clock.now(),
      fault: fault ? describe(fault) : null,
      status: null,
    };
    core.requests.add(entry);
    if (!fault) return respond(res, entry, operate(core, req, m, raw, json, query));
    await applyFault(fault, req, res, entry, () => operate(core, req, m, raw, json, query));
  }

  async function applyFault(
    fault: SandboxFault,
    req: IncomingMessage,
    res: ServerResponse,
    entry: LoggedRequest,
    run: () => SandboxReply,
  ): Promise<void> {
    const phase = fault.mode === 'delay' || fault.mode === 'hang' ? (fault.at ?? 'before') : null;
    if (fault.mode === 'drop-before') return drop(req);
    if (fault.mode === 'status') {
      return respond(res, entry, statusReply(fault.status, fault.error, fault.retryAfter));
    }
    if (fault.mode === 'hang' && phase === 'before') return;
    if (fault.mode === 'delay' && phase === 'before') await sleep(fault.ms);
    const reply = run();
    if (fault.mode === 'drop-after') {
      reply.finish?.();
      return drop(req);
    }
    if (fault.mode === 'fail-after') {
      reply.finish?.();
      return respond(res, entry, statusReply(fault.status ?? 500, fault.error));
    }
    if (fault.mode === 'hang') {
      if (reply.finish) res.once('close', reply.finish);
      return;
    }
    if (fault.mode === 'delay' && phase === 'after') await sleep(fault.ms);
    respond(res, entry, reply);
  }

  return (req: IncomingMessage, res: ServerResponse): void => {
    serve(req, res).catch((err) => {
      if (!res.headersSent && !res.destroyed) writeReply(res, errorReply(err));
    });
  };
}

function drop(req: IncomingMessage): void {
  const socket = req.socket;
  if (typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
  else socket.destroy();
}

function statusReply(status: number, error?: string, retryAfter?: number): SandboxReply {
  const reply: SandboxReply = { status, body: { error: error ?? `injected fault: status ${status}` } };
  if (status === 429 || retryAfter !== undefined) reply.headers = { 'retry-after': String(retryAfter ?? 1) };
  return reply;
}

function describe(fault: SandboxFault): string {
  if (fault.mode === 'status') return `status ${fault.status}`;
  if (fault.mode === 'delay') return `delay ${fault.ms}ms${fault.at === 'after' ? ' after' : ''}`;
  if (fault.mode === 'hang') return `hang${fault.at === 'after' ? ' after' : ''}`;
  return fault.mode;
}

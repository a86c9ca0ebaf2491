import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SandboxCore } from '../sandbox.core.js';
import type { SandboxRegistry } from '../sandbox.registry.js';
import { errorReply, readBody, SandboxHttpError, writeReply, type SandboxReply } from '../sandbox.http.js';
import { addBounce, faultRule, moveClock, recordEvent, removeBounce } from './page.actions.js';
import {
  BASE_HEADERS,
  MESSAGE_POLICY,
  MESSAGE_POLICY_IMAGES,
  PAGE_PATH,
  OWN_PIXEL,
  pageAsset,
  pagePolicy,
} from './page.assets.js';
import { PageStream } from './page.stream.js';
import { checkHtml } from './page.check.js';
import { deleteMessages, markRead } from './page.reads.js';
import { findHeld, listPage, messageView } from './page.view.js';

const MESSAGE = /^\/api\/messages\/([^/]+)(?:\/(html|raw|check|open|click|delete|attachments\/(\d{1,3})))?$/;
const json = (body: unknown, status = 200): SandboxReply => ({ status, body });

/**
 * Serves the sandbox page (`uiUrl`): its static files, a JSON API under `api/`, and `api/stream` (live
 * changes). `rest` is the path after `/__sandbox/outbox`. Every `api/` route works on the mailbox
 * named by the `mailbox` query parameter (the default one without it). The caller has already
 * refused foreign hosts and cross-origin state changes.
 */
export function createPage(registry: SandboxRegistry, timers: Set<NodeJS.Timeout>) {
  const stream = new PageStream(registry, timers);
  const basePath = registry.default.basePath;

  function get(req: IncomingMessage, path: string, query: URLSearchParams): SandboxReply | null {
    const origin = `http://${req.headers.host}`;
    const asset = pageAsset(path);
    if (asset) {
      const csp = pagePolicy(origin, basePath + PAGE_PATH);
      return {
        status: 200,
        raw: asset.body,
        headers: { 'content-type': asset.type, 'content-security-policy': csp },
      };
    }
    if (path === '/api/mailboxes') return json(mailboxes(registry));
    const core = registry.named(query.get('mailbox'));
    if (path === '/api/state') return json(state(core, origin));
    if (path === '/api/messages') return json(listPage(core, query));
    const m = MESSAGE.exec(path);
    if (!m || m[2] === 'open' || m[2] === 'click' || m[2] === 'delete') return null;
    const msg = findHeld(core, m[1]);
    if (m[2] === 'html') {
      const images = query.get('images') === '1';
      const html = msg.detail.html ?? '';
      return {
        status: 200,
        raw: Buffer.from(images ? html.replace(OWN_PIXEL, '') : html, 'utf8'),
        headers: {
          'content-type': 'text/html; charset=utf-8',
          'content-security-policy': images ? MESSAGE_POLICY_IMAGES : MESSAGE_POLICY,
        },
      };
    }
    if (m[2] === 'check') {
      const extras = core.extras.of(msg);
      const html = extras.html ?? msg.detail.html;
      if (html === null) throw new SandboxHttpError(404, `email ${msg.detail.id} has no html body to check`);
      return json(checkHtml(html));
    }
    if (m[2] === 'raw') {
      const extras = core.extras.of(msg);
      return json({ request: core.extras.requestOf(msg), html: msg.detail.html, sentHtml: extras.html });
    }
    if (m[3] !== undefined) return attachment(core.extras.of(msg).attachments[Number(m[3])]);
    return json(messageView(core, msg));
  }

  function post(path: string, query: URLSearchParams, body: unknown): SandboxReply | null {
    const core = registry.named(query.get('mailbox'));
    if (path === '/api/clock') return json(moveClock(core, body));
    if (path === '/api/faults') {
      core.faults.add(faultRule(body));
      return json(core.faults.active(), 201);
    }
    if (path === '/api/reset') {
      core.reset();
      return json(state(core, ''));
    }
    if (path === '/api/bounces') return json(addBounce(core, body), 201);
    if (path === '/api/bounces/remove') return json(removeBounce(core, body));
    if (path === '/api/faults/clear') {
      core.faults.clear();
      return json(core.faults.active());
    }
    if (path === '/api/messages/clear') {
      core.store.removeAll();
      return json({ messages: 0 });
    }
    if (path === '/api/messages/read') return json(markRead(core, body));
    if (path === '/api/messages/delete') return json(deleteMessages(core, body));
    const m = MESSAGE.exec(path);
    if (m && m[2] === 'delete') {
      core.store.remove(findHeld(core, m[1]).detail.id);
      return json({ messages: core.store.size });
    }
    if (!m || (m[2] !== 'open' && m[2] !== 'click')) return null;
    return json(recordEvent(core, findHeld(core, m[1]), m[2], body), 201);
  }

  async function serve(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    query: string,
  ): Promise<SandboxReply | void> {
    const method = req.method ?? 'GET';
    if (path === '') return { status: 308, headers: { location: 'outbox/' } };
    if (method === 'GET' || method === 'HEAD') {
      req.resume();
      if (path === '/api/stream' && method === 'GET') return stream.attach(res, BASE_HEADERS);
      return get(req, path, new URLSearchParams(query)) ?? notFound(path);
    }
    if (method !== 'POST') {
      req.resume();
      return { status: 405, body: { error: 'method not allowed' }, headers: { allow: 'GET, POST' } };
    }
    const raw = await readBody(req, 64 * 1024);
    const type = req.headers['content-type'] ?? '';
    if (!/^application\/json\s*(;|$)/i.test(type)) {
      throw new SandboxHttpError(415, 'send the action as JSON (Content-Type: application/json)');
    }
    let body: unknown = {};
    try {
      if (raw.length) body = JSON.parse(raw.toString('utf8'));
    } catch {
      throw new SandboxHttpError(400, 'body must be valid JSON');
    }
    return post(path, new URLSearchParams(query), body) ?? notFound(path);
  }

  /** Handles a request whose path (base path removed) starts with `/__sandbox/outbox`. */
  return async (req: IncomingMessage, res: ServerResponse, path: string, query: string): Promise<void> => {
    let reply: SandboxReply | void;
    try {
      reply = await serve(req, res, path, query);
    } catch (err) {
      reply = errorReply(err);
    }
    if (!reply || res.headersSent || res.destroyed) return;
    reply.headers = { ...BASE_HEADERS, ...reply.headers };
    writeReply(res, reply);
  };
}

/** `GET api/mailboxes`: every mailbox the sandbox serves, the default first, with its message count. */
function mailboxes(registry: SandboxRegistry): object {
  return registry.all().map((core) => ({ name: core.name, messages: core.store.size }));
}

function state(core: SandboxCore, origin: string): object {
  const { faults } = core;
  return {
    mailbox: core.name,
    now: new Date(core.tick()).toISOString(),
    messages: core.store.size,
    baseUrl: origin + core.basePath,
    faults: { ...faults.active(), injected: faults.injected, byMode: faults.counts() },
    bounces: core.bounces.list(),
  };
}

function attachment(a: { filename: string; content: Buffer | null } | undefined): SandboxReply {
  if (!a) throw new SandboxHttpError(404, 'no such attachment');
  if (!a.content) {
    throw new SandboxHttpError(
      410,
      `the content of ${a.filename} is no longer kept (the sandbox keeps 32 MiB)`,
    );
  }
  const ascii = a.filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return {
    status: 200,
    raw: a.content,
    headers: {
      'content-type': 'application/octet-stream',
      'content-disposition': `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(a.filename)}`,
      'content-security-policy': MESSAGE_POLICY,
    },
  };
}

const notFound = (path: string): SandboxReply => ({
  status: 404,
  body: { error: `no such page route: ${path}` },
});

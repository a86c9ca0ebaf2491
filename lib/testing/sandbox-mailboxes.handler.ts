import type { IncomingMessage } from 'node:http';
import { readBody, SandboxHttpError, type SandboxReply } from './sandbox.http.js';
import { sentMessage } from './sandbox.mailbox.js';
import type { SandboxMailboxOptions } from './sandbox.options.js';
import type { SandboxRegistry } from './sandbox.registry.js';
import type { SandboxCore } from './sandbox.core.js';

const bad = (message: string) => new SandboxHttpError(400, message);
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The options a `POST /__sandbox/mailboxes` body may give, type-checked (400 on a wrong one). */
function mailboxOptions(body: unknown): SandboxMailboxOptions {
  if (body === undefined) return {};
  if (!isObject(body)) throw bad('body must be a JSON object of mailbox options');
  const known = [
    'name',
    'apiKey',
    'domains',
    'plan',
    'tracking',
    'templates',
    'quota',
    'rateLimit',
    'clock',
    'maxMessages',
    'idempotencyScope',
  ];
  const unknown = Object.keys(body).filter((k) => !known.includes(k));
  if (unknown.length) throw bad(`unknown mailbox option(s): ${unknown.join(', ')}`);
  const { name, apiKey, domains, plan, maxMessages, idempotencyScope } = body;
  if (name !== undefined && typeof name !== 'string') throw bad('name must be a string');
  if (apiKey !== undefined && typeof apiKey !== 'string') throw bad('apiKey must be a string');
  if (domains !== undefined && !(Array.isArray(domains) && domains.every((d) => typeof d === 'string'))) {
    throw bad('domains must be an array of strings');
  }
  if (plan !== undefined && plan !== 'free' && plan !== 'growth') throw bad('plan must be free or growth');
  if (maxMessages !== undefined && typeof maxMessages !== 'number') throw bad('maxMessages must be a number');
  if (idempotencyScope !== undefined && idempotencyScope !== 'account' && idempotencyScope !== 'key') {
    throw bad('idempotencyScope must be account or key');
  }
  for (const k of ['tracking', 'templates', 'quota', 'rateLimit', 'clock'] as const) {
    if (body[k] !== undefined && body[k] !== null && !isObject(body[k])) throw bad(`${k} must be an object`);
  }
  return body as SandboxMailboxOptions;
}

/**
 * Mailboxes over HTTP, for test runs where the sandbox lives in another process (a Jest or Vitest
 * `globalSetup`): `POST mailboxes` makes one (`{ name, apiKey, baseUrl }`), `GET mailboxes/<name>/sent`
 * answers its messages as `SandboxSentMessage`s (attachment bytes in base64), `POST mailboxes/<name>/close`
 * removes it; `GET mailboxes/<name>/bounces`, `POST mailboxes/<name>/bounces` (`{ address, status:
 * 'bounced' | 'complained', existing? }`) and `POST mailboxes/<name>/bounces/remove` (`{ address }`) read and
 * change the addresses it makes bounce or complain. `rest` is the path after `/__sandbox/`; served with the
 * other admin routes.
 */
export async function handleMailboxes(
  registry: SandboxRegistry,
  req: IncomingMessage,
  rest: string,
  baseUrl: string,
): Promise<SandboxReply> {
  const method = req.method ?? 'GET';
  if (rest === 'mailboxes' && method === 'POST') {
    const raw = await readBody(req, 1024 * 1024);
    let body: unknown;
    try {
      body = raw.length ? JSON.parse(raw.toString('utf8')) : undefined;
    } catch {
      throw bad('body must be valid JSON');
    }
    let core;
    try {
      core = registry.add(mailboxOptions(body));
    } catch (err) {
      if (err instanceof TypeError) throw bad(err.message);
      throw err;
    }
    return { status: 201, body: { name: core.name, apiKey: core.primaryKey, baseUrl } };
  }
  const b = /^mailboxes\/([^/]+)\/bounces(\/remove)?$/.exec(rest);
  if (b) return bounceRoute(registry.named(decodeURIComponent(b[1])), req, method, b[2] !== undefined);
  req.resume();
  const m = /^mailboxes\/([^/]+)\/(sent|close)$/.exec(rest);
  if (m && m[2] === 'sent' && method === 'GET') {
    const core = registry.named(decodeURIComponent(m[1]));
    core.tick();
    const sent = core.store.all().map((msg) => {
      const out = sentMessage(core, msg);
      return {
        ...out,
        attachments: out.attachments.map((a) => ({ ...a, content: a.content?.toString('base64') ?? null })),
      };
    });
    return { status: 200, body: sent };
  }
  if (m && m[2] === 'close' && method === 'POST') {
    registry.remove(registry.named(decodeURIComponent(m[1])));
    return { status: 204 };
  }
  return { status: 404, body: { error: 'no such route' } };
}

/** `GET`/`POST mailboxes/<name>/bounces` and `POST .../bounces/remove`: what `mailbox.bounce`, `complain`,
 * `bounces` and `clearBounce` do, over HTTP. */
async function bounceRoute(
  core: SandboxCore,
  req: IncomingMessage,
  method: string,
  remove: boolean,
): Promise<SandboxReply> {
  if (method === 'GET' && !remove) {
    req.resume();
    return { status: 200, body: core.bounces.list() };
  }
  if (method !== 'POST') {
    req.resume();
    return { status: 405, body: { error: 'use GET or POST' } };
  }
  const raw = await readBody(req, 64 * 1024);
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw bad('body must be valid JSON');
  }
  if (!isObject(body) || typeof body.address !== 'string') throw bad('address must be a string');
  if (remove) {
    const cleared = core.bounces.clear(body.address);
    core.store.touch();
    return { status: 200, body: { cleared } };
  }
  const { status, existing } = body;
  if (status !== 'bounced' && status !== 'complained') throw bad('status must be bounced or complained');
  if (existing !== undefined && typeof existing !== 'boolean') throw bad('existing must be a boolean');
  try {
    core.bounces.mark(body.address, status, existing === true, core.store, core.tick());
  } catch (err) {
    if (err instanceof TypeError) throw bad(err.message);
    throw err;
  }
  return { status: 201, body: core.bounces.list() };
}

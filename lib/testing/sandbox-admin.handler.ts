import type { SandboxReply } from './sandbox.http.js';
import type { SandboxRegistry } from './sandbox.registry.js';
import { handleTracking } from './sandbox.tracking.js';

/**
 * Routes under `/__sandbox/` that are not part of the contract: tracking pixels and click redirects
 * (`track/…` for the default mailbox, `track/m/<name>/…` for the others; always on, no auth) and,
 * unless `admin: false`, `GET stats` and `POST reset` (of the default mailbox).
 * `rest` is the path after `/__sandbox/`.
 */
export function handleAdmin(registry: SandboxRegistry, method: string, rest: string): SandboxReply {
  const core = registry.default;
  if (rest.startsWith('track/') && (method === 'GET' || method === 'HEAD')) {
    const m = /^track\/m\/([^/]+)\/(.*)$/.exec(rest);
    let box = core;
    try {
      if (m) box = registry.named(m[1]);
    } catch {
      return { status: 404, body: { error: 'unknown tracking link' } };
    }
    return handleTracking(m ? m[2] : rest.slice(6), box.store, box.tick());
  }
  if (core.admin && rest === 'stats' && method === 'GET') {
    core.tick();
    return {
      status: 200,
      body: {
        messages: core.store.size,
        faults: core.faults.injected,
        faultsByMode: core.faults.counts(),
        limited: core.limited(),
      },
    };
  }
  if (core.admin && rest === 'reset' && method === 'POST') {
    core.reset();
    return { status: 204 };
  }
  return { status: 404, body: { error: 'no such route' } };
}

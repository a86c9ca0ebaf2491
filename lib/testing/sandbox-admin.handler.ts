import type { SandboxCore } from './sandbox.core.js';
import type { SandboxReply } from './sandbox.http.js';
import { handleTracking } from './sandbox.tracking.js';

/**
 * Routes under `/__sandbox/` that are not part of the contract: tracking pixels and click redirects
 * (`track/…`, always on, no auth) and, unless `admin: false`, `GET stats` and `POST reset`.
 * `rest` is the path after `/__sandbox/`.
 */
export function handleAdmin(core: SandboxCore, method: string, rest: string): SandboxReply {
  if (rest.startsWith('track/') && (method === 'GET' || method === 'HEAD')) {
    return handleTracking(rest.slice(6), core.store, core.tick());
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

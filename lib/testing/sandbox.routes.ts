import type { SandboxRoute } from './sandbox.fault.types.js';
import type { SandboxReply } from './sandbox.http.js';

/** A request matched to a contract route (`id` is the raw path id, '' when none). */
export interface Matched {
  route: SandboxRoute;
  id: string;
}

/** The answer for a path that is no route. */
export const notFound = (): SandboxReply => ({ status: 404, body: { error: 'no such route' } });
const notAllowed = (allow: string): SandboxReply => ({
  status: 405,
  body: { error: 'method not allowed' },
  headers: { allow },
});

/** Maps method and path (base path removed) to a route, or to the answer for a path that is none. */
export function match(method: string, path: string): Matched | SandboxReply {
  if (path === '/emails') {
    if (method === 'POST') return { route: 'POST /emails', id: '' };
    if (method === 'GET') return { route: 'GET /emails', id: '' };
    return notAllowed('GET, POST');
  }
  if (!path.startsWith('/emails/')) return notFound();
  const rest = path.slice(8);
  const slash = rest.indexOf('/');
  if (slash < 0) {
    if (rest === 'batch' && method === 'POST') return { route: 'POST /emails/batch', id: '' };
    return method === 'GET'
      ? { route: 'GET /emails/:id', id: rest }
      : notAllowed(rest === 'batch' ? 'POST' : 'GET');
  }
  if (rest.slice(slash) !== '/events') return notFound();
  return method === 'GET' ? { route: 'GET /emails/:id/events', id: rest.slice(0, slash) } : notAllowed('GET');
}

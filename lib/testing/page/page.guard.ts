import type { IncomingMessage } from 'node:http';

const SAFE_METHODS = new Set(['GET', 'HEAD']);

/**
 * Why a request to the sandbox's own routes (sandbox page, admin) must be refused, or null to serve it.
 * Its `Host` has already passed the one Host rule of every route (`hostRefusal` in `sandbox.host.ts`: a
 * loopback name or address, or one of `allowedHosts`), so the page works wherever the API does.
 * - A state-changing request (any method but GET and HEAD) sent by a browser must come from the
 *   sandbox's own origin: `Sec-Fetch-Site`, when present, must be `same-origin`, and `Origin`, when
 *   present, must be this very origin. Clients that send neither (curl, tests, Node) are served.
 *
 * @example
 * foreignRequest(req); // 'cross-origin request refused (Origin http://evil.test)'
 */
export function foreignRequest(req: IncomingMessage): string | null {
  const host = req.headers.host ?? '';
  if (SAFE_METHODS.has(req.method ?? 'GET')) return null;
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') {
    return `cross-origin request refused (Sec-Fetch-Site ${site}): only the sandbox's own page may change it`;
  }
  const origin = req.headers.origin;
  if (origin !== undefined && origin.toLowerCase() !== `http://${host.toLowerCase()}`) {
    return `cross-origin request refused (Origin ${origin}): only the sandbox's own page may change it`;
  }
  return null;
}

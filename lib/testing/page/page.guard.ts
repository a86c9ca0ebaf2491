import type { IncomingMessage } from 'node:http';

const LOOPBACK_HOST = /^(?:127\.0\.0\.1|localhost|[a-z0-9-]+\.localhost|\[::1\])(?::\d{1,5})?$/i;
const SAFE_METHODS = new Set(['GET', 'HEAD']);

/**
 * Why a request to the sandbox's own routes (sandbox page, admin) must be refused, or null to serve it.
 * - Its `Host` must be a loopback name: a page that rebinds its own domain to 127.0.0.1 cannot read
 *   the page.
 * - A state-changing request (any method but GET and HEAD) sent by a browser must come from the
 *   sandbox's own origin: `Sec-Fetch-Site`, when present, must be `same-origin`, and `Origin`, when
 *   present, must be this very origin. Clients that send neither (curl, tests, Node) are served.
 *
 * @example
 * foreignRequest(req); // 'cross-origin request refused (Origin http://evil.test)'
 */
export function foreignRequest(req: IncomingMessage): string | null {
  const host = req.headers.host ?? '';
  if (!LOOPBACK_HOST.test(host)) return `host ${JSON.stringify(host)} refused: open the sandbox on 127.0.0.1`;
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

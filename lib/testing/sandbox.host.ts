import type { IncomingMessage } from 'node:http';

/** A loopback name or address: 127.0.0.0/8, `localhost` and its subdomains, `[::1]`. */
const LOOPBACK_NAME = /^(?:127(?:\.\d{1,3}){3}|localhost|[a-z0-9-]+(?:\.[a-z0-9-]+)*\.localhost|\[::1\])$/i;
/** What `allowedHosts` may hold: a host name or address, with or without a port. */
const HOST_ENTRY = /^(?:\[[0-9a-f:.]+\]|[a-z0-9_-]+(?:\.[a-z0-9_-]+)*)(?::\d{1,5})?$/i;

/** Methods that change nothing: a foreign `Origin` is refused only on the others. */
const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** `host` without its port, lower-cased (`[::1]:4010` -> `[::1]`). */
function hostName(host: string): string {
  const lower = host.toLowerCase();
  if (lower.startsWith('[')) return lower.slice(0, lower.indexOf(']') + 1);
  const colon = lower.lastIndexOf(':');
  return colon < 0 ? lower : lower.slice(0, colon);
}

/**
 * Checks the `allowedHosts` option; throws a `TypeError` naming each entry that is not a host name or
 * address (an optional port allowed, no scheme, no path).
 */
export function checkAllowedHosts(hosts: unknown): string[] {
  if (hosts === undefined || hosts === null) return [];
  if (!Array.isArray(hosts)) throw new TypeError('allowedHosts must be an array of host names');
  const bad = hosts.filter((h) => typeof h !== 'string' || !HOST_ENTRY.test(h));
  if (bad.length > 0) {
    throw new TypeError(
      `allowedHosts: ${bad.map((h) => JSON.stringify(h)).join(', ')} is not a host name or address ` +
        `(e.g. "sandbox", "email-sandbox.internal:4010"; no scheme, no path)`,
    );
  }
  return (hosts as string[]).map((h) => h.toLowerCase());
}

/**
 * The guard in front of every route of the sandbox (contract routes, tracking links, the admin API
 * and the outbox page). A web page the developer visits can reach a sandbox on a fixed port with a
 * published key only through a name it controls rebound to 127.0.0.1 (its requests then carry its own
 * `Host`), or by a cross-site write (its requests carry its `Origin`). So:
 * - the `Host` must be a loopback name or address, or one of `allowedHosts` (a name the user gave the
 *   sandbox, e.g. in a container network): with a port, it must match with that port; without, any port;
 * - a request that may change something (not GET, HEAD, OPTIONS) with an `Origin` is served only when
 *   that origin's host passes the same test.
 * Clients that send no `Origin` (Node, curl, the module itself) pass the second rule.
 * Returns why a request is refused, or null.
 */
export function hostRefusal(req: IncomingMessage, allowed: readonly string[]): string | null {
  const host = req.headers.host;
  if (host !== undefined && !hostAllowed(host, allowed)) {
    return (
      `host ${JSON.stringify(host)} refused: the sandbox answers loopback names (127.0.0.1, localhost)` +
      ` and the hosts allowed with the allowedHosts option (--allowed-host)`
    );
  }
  const origin = req.headers.origin;
  if (origin === undefined || READS.has(req.method ?? 'GET')) return null;
  const originHost = /^https?:\/\/([^/]+)$/i.exec(origin)?.[1];
  if (originHost !== undefined && hostAllowed(originHost, allowed)) return null;
  return `cross-origin request refused (Origin ${origin}): a web page of another site may not change the sandbox`;
}

function hostAllowed(host: string, allowed: readonly string[]): boolean {
  if (LOOPBACK_NAME.test(hostName(host))) return true;
  if (allowed.length === 0) return false;
  const lower = host.toLowerCase();
  const name = hostName(lower);
  return allowed.some((entry) => entry === lower || entry === name);
}

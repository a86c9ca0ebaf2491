import type { SandboxCore } from './sandbox.core.js';
import { SandboxHttpError } from './sandbox.http.js';
import type { ResolvedSandboxKey } from './sandbox.options.js';

/** Resolves `Authorization: Bearer <key>`; 401 when missing, unknown or revoked. */
export function authenticate(core: SandboxCore, header: string | undefined): ResolvedSandboxKey {
  if (!header || header.length < 8 || header.slice(0, 7).toLowerCase() !== 'bearer ') {
    throw new SandboxHttpError(401, 'missing bearer credentials');
  }
  const key = core.keys.get(header.slice(7).trim());
  if (!key) throw new SandboxHttpError(401, 'invalid API key');
  if (key.revoked) throw new SandboxHttpError(401, 'API key has been revoked');
  return key;
}

/** 403 unless the key may send from this domain (and, with `allowSubdomains`, its subdomains). */
export function checkSender(core: SandboxCore, key: ResolvedSandboxKey, domain: string, at = ''): void {
  if (key.domains.has(domain)) return;
  if (core.allowSubdomains) {
    for (let i = domain.indexOf('.'); i >= 0; i = domain.indexOf('.', i + 1)) {
      if (key.domains.has(domain.slice(i + 1))) return;
    }
  }
  throw new SandboxHttpError(403, `${at}sender domain ${domain} is not verified for this API key`);
}

/** 403 when the key's plan lacks scheduling. */
export function checkScheduling(key: ResolvedSandboxKey): void {
  if (key.plan !== 'growth') throw new SandboxHttpError(403, 'scheduling needs the Growth plan or above');
}

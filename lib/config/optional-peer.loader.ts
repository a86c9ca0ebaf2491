import { peerRequire } from './peer-require.util.js';

const NOT_FOUND_CODES = new Set(['MODULE_NOT_FOUND', 'ERR_MODULE_NOT_FOUND']);

/**
 * Optional peers whose major follows NestJS's, with the range for each Nest major: their latest major is
 * ES modules only (for NestJS 12), which a NestJS 11 app (CommonJS) cannot load under Jest. Kept in step
 * with the install lines of docs/getting-started.md.
 */
const NEST_BOUND_PEERS: Readonly<Record<string, { nest11: string; nest12: string }>> = {
  '@nestjs/config': { nest11: '^4', nest12: '^12' },
  '@nestjs/terminus': { nest11: '^11', nest12: '^12' },
};

/** The text of the error thrown when an optional peer dependency is used but not installed. */
export function missingPeerMessage(specifier: string, feature: string): string {
  const bound = NEST_BOUND_PEERS[specifier];
  const install = bound
    ? `npm install ${specifier}@${bound.nest12} in a NestJS 12 app, npm install ${specifier}@${bound.nest11} in a NestJS 11 app`
    : `npm install ${specifier}`;
  return (
    `${feature} needs the optional peer dependency ${specifier}, which is not installed. ` +
    `Install it next to nestjs-transactional-email: ${install}`
  );
}

/** True when `err` says that `specifier` itself cannot be found (not one of its own dependencies). */
export function isMissingModule(err: unknown, specifier: string): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  if (typeof message !== 'string') return false;
  const named = message.includes(`'${specifier}'`) || message.includes(`"${specifier}"`);
  const notFound =
    typeof code === 'string' ? NOT_FOUND_CODES.has(code) : /cannot find (module|package)/i.test(message);
  return named && notFound;
}

/** An optional peer dependency is used but not installed; the message says what to install. */
export class MissingPeerError extends Error {
  constructor(
    readonly specifier: string,
    feature: string,
    cause: unknown,
  ) {
    super(missingPeerMessage(specifier, feature), { cause });
    this.name = 'MissingPeerError';
  }
}

function wrap(err: unknown, specifier: string, feature: string): unknown {
  return isMissingModule(err, specifier) ? new MissingPeerError(specifier, feature, err) : err;
}

/**
 * Loads an optional peer dependency synchronously (`require`, which also loads ESM packages on
 * Node >= 20.19). A missing package gives an error that says what to install.
 *
 * @example
 * const { registerAs } = requirePeer<typeof import('@nestjs/config')>('@nestjs/config', 'emailConfig');
 */
export function requirePeer<T>(specifier: string, feature: string): T {
  try {
    return peerRequire()(specifier) as T;
  } catch (err) {
    throw wrap(err, specifier, feature);
  }
}

/**
 * Loads an optional peer dependency with `import()`. A missing package gives an error that says what to install.
 *
 * @example
 * const terminus = await importPeer<typeof import('@nestjs/terminus')>('@nestjs/terminus', 'EmailHealthIndicator');
 */
export async function importPeer<T>(specifier: string, feature: string): Promise<T> {
  try {
    return (await import(specifier)) as T;
  } catch (err) {
    throw wrap(err, specifier, feature);
  }
}

/**
 * Why an optional peer cannot be used, as the error to throw when the feature is used: the
 * `MissingPeerError` itself, or an error saying that the installed package failed to load.
 */
export function unusablePeer(err: unknown, specifier: string, feature: string): Error {
  if (err instanceof MissingPeerError) return err;
  const reason = err instanceof Error ? err.message : String(err);
  return new Error(`${feature} could not load ${specifier}: ${reason}`, { cause: err });
}

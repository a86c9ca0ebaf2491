import { MissingPeerError, requirePeer } from './optional-peer.loader.js';

/** What this package uses of `@nestjs/config`. */
export interface ConfigPeer {
  registerAs: (token: string, factory: () => unknown) => unknown;
}

/** The feature named by the "not installed" error. */
export const CONFIG_FEATURE = 'emailConfig';

/** `@nestjs/config`, or the error saying why it cannot be used (not installed, or it failed to load). */
export type LoadedConfigPeer = ConfigPeer | Error;

/** A load that failed for another reason than a missing package: said when `emailConfig` is used. */
function loadFailed(specifier: string, err: unknown): Error {
  const reason = err instanceof Error ? err.message : String(err);
  return new Error(`${CONFIG_FEATURE} could not load ${specifier}: ${reason}`, { cause: err });
}

/** Loads `@nestjs/config` synchronously, CommonJS build (`require`, which loads ESM too on Node >= 20.19). */
function requireConfigPeer(specifier: string): LoadedConfigPeer {
  try {
    return requirePeer<ConfigPeer>(specifier, CONFIG_FEATURE);
  } catch (err) {
    return err instanceof MissingPeerError ? err : loadFailed(specifier, err);
  }
}

/**
 * Loads `@nestjs/config`, CommonJS build: `npm run build` puts this file in place of
 * `config-peer.loader.ts` (a CommonJS module cannot await at its top level).
 * @internal `specifier` is for specs of the "not installed" path.
 */
export async function loadConfigPeer(specifier = '@nestjs/config'): Promise<LoadedConfigPeer> {
  return requireConfigPeer(specifier);
}

/** Loaded once, as this package is required. */
export const configPeer: LoadedConfigPeer = requireConfigPeer('@nestjs/config');

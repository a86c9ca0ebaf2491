import type { ConfigPeer, LoadedConfigPeer } from './config-peer.interface.js';
import { CONFIG_FEATURE } from './email.constants.js';
import { requirePeer, unusablePeer } from './optional-peer.loader.js';

/** Loads `@nestjs/config` synchronously (`require`, which loads ESM packages too on Node >= 20.19). */
function requireConfigPeer(specifier: string): LoadedConfigPeer {
  try {
    return requirePeer<ConfigPeer>(specifier, CONFIG_FEATURE);
  } catch (err) {
    return unusablePeer(err, specifier, CONFIG_FEATURE);
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

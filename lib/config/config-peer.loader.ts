import type { ConfigPeer, LoadedConfigPeer } from './config-peer.interface.js';
import { CONFIG_FEATURE } from './email.constants.js';
import { importPeer, unusablePeer } from './optional-peer.loader.js';

/**
 * Loads `@nestjs/config`, ES module build: with `import()`, which works wherever ES modules run (a
 * test runner's own module registry included, so the app and `emailConfig` share one `ConfigModule`).
 * The CommonJS build replaces this file with `config-peer.loader.cjs.ts`.
 * @internal `specifier` is for specs of the "not installed" path.
 */
export async function loadConfigPeer(specifier = '@nestjs/config'): Promise<LoadedConfigPeer> {
  try {
    return await importPeer<ConfigPeer>(specifier, CONFIG_FEATURE);
  } catch (err) {
    return unusablePeer(err, specifier, CONFIG_FEATURE);
  }
}

/** Loaded once, as this package is imported (a top-level await: the ES module build only). */
export const configPeer: LoadedConfigPeer = await loadConfigPeer();

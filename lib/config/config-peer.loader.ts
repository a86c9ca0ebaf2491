import { importPeer, MissingPeerError } from './optional-peer.loader.js';

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
    return err instanceof MissingPeerError ? err : loadFailed(specifier, err);
  }
}

/** Loaded once, as this package is imported (a top-level await: the ES module build only). */
export const configPeer: LoadedConfigPeer = await loadConfigPeer();

/**
 * How optional peers are loaded, CommonJS build: `npm run build` puts this file in place of
 * `peer-import.loader.ts`. The module's own `require`, so a test runner with its own module registry
 * (Jest) hands out the same peer instances as to the app.
 */

export function peerRequire(): (specifier: string) => unknown {
  return require;
}

export function importNow(specifier: string): Promise<unknown> {
  return new Promise((resolve) => resolve(peerRequire()(specifier)));
}

function settle(specifier: string): { module?: unknown; error?: unknown } {
  try {
    return { module: peerRequire()(specifier) };
  } catch (error) {
    return { error };
  }
}

export const configModule: { module?: unknown; error?: unknown } = settle('@nestjs/config');

import { createRequire } from 'node:module';

/**
 * How optional peers are loaded, ES module build. The CommonJS build replaces this file with
 * `peer-import.loader.cjs.ts` (no `import.meta` and no top-level `await` there); both export the same.
 */

/** `require` resolved from this package's folder: Node's own `createRequire` (from `process.getBuiltinModule`
 * where it can, so a test runner's stand-in for `node:module` is bypassed). Loads ESM packages too. */
export function peerRequire(): (specifier: string) => unknown {
  const builtin = process.getBuiltinModule?.('node:module') as typeof import('node:module') | undefined;
  return (builtin?.createRequire ?? createRequire)(import.meta.url);
}

/** Loads a peer the way this build loads modules: `import()` (a test runner's own registry included). */
export function importNow(specifier: string): Promise<unknown> {
  return import(specifier);
}

/** `@nestjs/config`, loaded once as this package is imported (top-level await), or why it could not be. */
export const configModule: { module?: unknown; error?: unknown } = await importNow('@nestjs/config').then(
  (module) => ({ module }),
  (error: unknown) => ({ error }),
);

import { createRequire } from 'node:module';

/** A `require` function: loads a package by name, resolved from this package's own folder. */
export type RequireFn = (specifier: string) => unknown;

/**
 * The `require` that loads optional peers, ES module build. Node's own `createRequire`, taken from
 * `process.getBuiltinModule` (Node >= 20.16) where it can: that gives the real one even where a test
 * runner swaps `node:module` for a stand-in that cannot load ES modules.
 *
 * The CommonJS build replaces this file with `peer-require.util.cjs.ts` (no `import.meta` there).
 */
export function peerRequire(): RequireFn {
  const builtin = process.getBuiltinModule?.('node:module') as typeof import('node:module') | undefined;
  return (builtin?.createRequire ?? createRequire)(import.meta.url);
}

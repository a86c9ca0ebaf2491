/** A `require` function: loads a package by name, resolved from this package's own folder. */
export type RequireFn = (specifier: string) => unknown;

/**
 * The `require` that loads optional peers, CommonJS build: the module's own `require`, so that a test
 * runner with its own module registry (Jest) hands out the same peer instances as to the app.
 *
 * `npm run build` puts this file in place of `peer-require.util.ts` for the CommonJS build.
 */
export function peerRequire(): RequireFn {
  return require;
}

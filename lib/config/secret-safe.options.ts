import { inspect } from 'node:util';
import type { EmailModuleOptions } from '../interfaces/email-module-options.interface.js';

function redacted(options: EmailModuleOptions): Record<string, unknown> {
  return { ...options, apiKey: options.apiKey === undefined ? undefined : '[redacted]' };
}

/**
 * Makes an options object safe to log: `util.inspect`, `console.log` and `JSON.stringify` show the API key
 * as `[redacted]`. The hooks are not enumerable, so a spread (`{ ...options }`) still carries the key itself.
 */
export function secretSafe<T extends EmailModuleOptions>(options: T): T {
  Object.defineProperties(options, {
    toJSON: { value: () => redacted(options), enumerable: false },
    [inspect.custom]: {
      value: (_depth: number, opts: object) => inspect(redacted(options), opts),
      enumerable: false,
    },
  });
  return options;
}

/**
 * A copy of module options whose `apiKey` is not enumerable and whose `util.inspect` and `toJSON` show
 * it as `[redacted]`: what `forRoot` keeps, so that inspecting the module, its providers or the app does
 * not print the key. Reading `copy.apiKey` still gives the key. The caller's own object is left as it is.
 */
export function keyHiddenCopy<T extends EmailModuleOptions>(options: T): T {
  if (typeof options !== 'object' || options === null) return options;
  const copy = { ...options };
  if ('apiKey' in copy) {
    Object.defineProperty(copy, 'apiKey', { value: options.apiKey, enumerable: false, writable: false });
  }
  return secretSafe(copy);
}

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

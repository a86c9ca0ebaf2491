import { inspect } from 'node:util';
import type { EmailModuleOptions } from '../interfaces/email-module-options.interface.js';

/**
 * The keys of the copies `keyHiddenCopy` made, held outside them: no property of a copy (enumerable or
 * not, own or inherited, data or getter) leads to its key, so no `util.inspect` mode can print it.
 */
const heldKeys = new WeakMap<object, unknown>();

function redacted(options: EmailModuleOptions): Record<string, unknown> {
  const key = apiKeyOf(options);
  return { ...options, apiKey: key === undefined ? undefined : '[redacted]' };
}

/**
 * Makes an options object safe to log: `util.inspect`, `console.log` and `JSON.stringify` show the API key
 * as `[redacted]`, and even `util.inspect(options, { customInspect: false, showHidden: true })` shows
 * only `apiKey: [Getter/Setter]`: the key is held in a closure behind an enumerable accessor. Reading
 * `options.apiKey` and a spread (`{ ...options }`, a plain object again) still give the key itself.
 */
export function secretSafe<T extends EmailModuleOptions>(options: T): T {
  const own = Object.getOwnPropertyDescriptor(options, 'apiKey');
  if (own !== undefined && 'value' in own) {
    let key: unknown = own.value;
    Object.defineProperty(options, 'apiKey', {
      get: () => key,
      set: (value: unknown) => void (key = value),
      enumerable: own.enumerable,
      configurable: true,
    });
  }
  Object.defineProperties(options, {
    toJSON: { value: () => redacted(options), enumerable: false },
    [inspect.custom]: {
      value: (_depth: number, opts: object) => inspect(redacted(options), opts),
      enumerable: false,
    },
  });
  return options;
}

/** The API key of module options: the one `keyHiddenCopy` holds for a copy, else `options.apiKey`. */
export function apiKeyOf(options: EmailModuleOptions): unknown {
  return heldKeys.has(options) ? heldKeys.get(options) : options.apiKey;
}

/**
 * A copy of module options without `apiKey`: the key is held outside the copy (read it with
 * {@link apiKeyOf}), and `util.inspect` and `toJSON` show it as `[redacted]`. This is what `forRoot`
 * keeps, so that inspecting the module, its providers or the app, in any `util.inspect` mode
 * (`customInspect: false`, `showHidden`, `getters`), does not print the key. The caller's object is left as it is.
 */
export function keyHiddenCopy<T extends EmailModuleOptions>(options: T): T {
  if (typeof options !== 'object' || options === null) return options;
  const key = apiKeyOf(options);
  const copy = { ...options } as Partial<T>;
  delete copy.apiKey;
  hideHashSecret(copy);
  if (key !== undefined || 'apiKey' in options) heldKeys.set(copy, key);
  return secretSafe(copy as T);
}

/** The `suppression.hashAddresses.secret` of the copies `keyHiddenCopy` made, held outside them (as keys are). */
const heldHashSecrets = new WeakMap<object, unknown>();

/** Replaces `suppression.hashAddresses` of a copy by an empty stand-in whose secret is held outside it. */
function hideHashSecret(copy: Partial<EmailModuleOptions>): void {
  const { suppression } = copy;
  const hashAddresses =
    typeof suppression === 'object' && suppression !== null ? suppression.hashAddresses : undefined;
  if (typeof hashAddresses !== 'object' || hashAddresses === null || !('secret' in hashAddresses)) return;
  const standIn = {};
  Object.defineProperties(standIn, {
    toJSON: { value: () => ({ secret: '[redacted]' }), enumerable: false },
    [inspect.custom]: { value: () => "{ secret: '[redacted]' }", enumerable: false },
  });
  heldHashSecrets.set(standIn, (hashAddresses as { secret?: unknown }).secret);
  copy.suppression = { ...suppression, hashAddresses: standIn as { secret: string } };
}

/** The secret of a `hashAddresses` option: the one `keyHiddenCopy` holds for its stand-in, else its `secret`. */
export function hashSecretOf(hashAddresses: unknown): unknown {
  if (typeof hashAddresses !== 'object' || hashAddresses === null) return undefined;
  return heldHashSecrets.has(hashAddresses)
    ? heldHashSecrets.get(hashAddresses)
    : (hashAddresses as { secret?: unknown }).secret;
}

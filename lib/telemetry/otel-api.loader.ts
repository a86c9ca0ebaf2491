import type { OtelApiModule } from './otel-api.interface.js';

export type { OtelApiModule };

const SPECIFIER = '@opentelemetry/api';

let loaded: OtelApiModule | null | undefined;
let loading: Promise<OtelApiModule | null> | undefined;

/**
 * Loads `@opentelemetry/api` once, lazily, with `import()`. Absent (not installed) gives null: telemetry
 * is then a no-op and nothing else is imported. Any other loading failure is thrown.
 */
export function loadOtelApi(): Promise<OtelApiModule | null> {
  if (loaded !== undefined) return Promise.resolve(loaded);
  loading ??= import(SPECIFIER).then(
    (mod: OtelApiModule & { default?: OtelApiModule }) => (loaded = mod.trace ? mod : (mod.default ?? null)),
    (err: unknown) => {
      const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
      const missing =
        (code === 'ERR_MODULE_NOT_FOUND' ||
          code === 'MODULE_NOT_FOUND' ||
          /cannot find/i.test(String(message))) &&
        String(message).includes(SPECIFIER);
      if (!missing) throw err;
      return (loaded = null);
    },
  );
  return loading;
}

/** The API if an earlier `loadOtelApi()` (any `EmailModule` with telemetry on) loaded it; null otherwise. */
export function loadedOtelApi(): OtelApiModule | null {
  return loaded ?? null;
}

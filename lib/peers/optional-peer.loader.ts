import type { HealthIndicatorService } from '@nestjs/terminus';
import type { ModuleRef } from '@nestjs/core';
import { MissingPeerError } from '../errors/missing-peer.error.js';
import type { OtelApiModule } from '../interfaces/otel-api.interface.js';
import { configModule, importNow, peerRequire } from './peer-import.loader.js';

// Every optional peer of the package is loaded through here, one way: `requirePeer` (synchronous) or `importPeer`
// (`import()`), each turning "not installed" into a `MissingPeerError` that says what to install. The
// build-specific part (how to require, `@nestjs/config` loaded at import) is `peer-import.loader(.cjs).ts`;
// ioredis, on `requirePeer`, is opened in `ioredis.loader.ts`.

const NOT_FOUND_CODES = new Set(['MODULE_NOT_FOUND', 'ERR_MODULE_NOT_FOUND']);

/** True when `err` says that `specifier` itself cannot be found (not one of its own dependencies). */
export function isMissingModule(err: unknown, specifier: string): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  if (typeof message !== 'string') return false;
  const named = message.includes(`'${specifier}'`) || message.includes(`"${specifier}"`);
  const notFound =
    typeof code === 'string' ? NOT_FOUND_CODES.has(code) : /cannot find (module|package)/i.test(message);
  return named && notFound;
}

function wrap(err: unknown, specifier: string, feature: string): unknown {
  return isMissingModule(err, specifier) ? new MissingPeerError(specifier, feature, err) : err;
}

/** A module's own exports, whether it was loaded as ES module or CommonJS (`default` holding them). */
function exportsOf<T>(mod: unknown, marker: string): T {
  const m = mod as Record<string, unknown> & { default?: Record<string, unknown> };
  return (m[marker] === undefined && m.default?.[marker] !== undefined ? m.default : m) as T;
}

/**
 * Loads an optional peer synchronously (`require`, which also loads ESM packages on Node >= 20.19).
 * @example requirePeer<typeof import('bullmq')>('bullmq', 'EmailQueueModule')
 */
export function requirePeer<T>(specifier: string, feature: string): T {
  try {
    return peerRequire()(specifier) as T;
  } catch (err) {
    throw wrap(err, specifier, feature);
  }
}

/**
 * Loads an optional peer with `import()`.
 * @example await importPeer<typeof import('@nestjs/terminus')>('@nestjs/terminus', 'EmailHealthIndicator')
 */
export async function importPeer<T>(specifier: string, feature: string): Promise<T> {
  try {
    return (await importNow(specifier)) as T;
  } catch (err) {
    throw wrap(err, specifier, feature);
  }
}

/** Why an optional peer cannot be used: the `MissingPeerError`, or an error saying it failed to load. */
export function unusablePeer(err: unknown, specifier: string, feature: string): Error {
  const wrapped = wrap(err, specifier, feature);
  if (wrapped instanceof MissingPeerError) return wrapped;
  const reason = err instanceof Error ? err.message : String(err);
  return new Error(`${feature} could not load ${specifier}: ${reason}`, { cause: err });
}

// @nestjs/config -------------------------------------------------------------------------------------

/** What this package uses of `@nestjs/config`. */
export interface ConfigPeer {
  registerAs: (token: string, factory: () => unknown) => unknown;
}

/** `@nestjs/config`, or the error saying why it cannot be used (not installed, or it failed to load). */
export type LoadedConfigPeer = ConfigPeer | Error;

const CONFIG_FEATURE = 'emailConfig';

function configPeerOf(settled: { module?: unknown; error?: unknown }, specifier: string): LoadedConfigPeer {
  if (settled.error !== undefined) return unusablePeer(settled.error, specifier, CONFIG_FEATURE);
  return exportsOf<ConfigPeer>(settled.module, 'registerAs');
}

/** `@nestjs/config` as loaded once when this package was (so that `emailConfig` uses its own `registerAs`). */
export const configPeer: LoadedConfigPeer = configPeerOf(configModule, '@nestjs/config');

// @nestjs/terminus -----------------------------------------------------------------------------------

type TerminusExports = { HealthIndicatorService: new () => HealthIndicatorService };

/**
 * Terminus's `HealthIndicatorService` for a health indicator (the one loader of the module's three:
 * `EmailHealthIndicator`, `EmailQueueHealthIndicator`, `EmailOutboxHealthIndicator`): the application's own
 * when it has one, else a fresh one. `@nestjs/terminus` is imported at each check: Node keeps the module
 * once it loaded, so only the first check pays, and no failure is kept here (the next check tries again).
 * Rejects with a `MissingPeerError` naming `feature` when it is not installed.
 */
export async function healthIndicatorServiceOf(
  moduleRef: ModuleRef,
  feature: string,
): Promise<HealthIndicatorService> {
  const terminus = exportsOf<TerminusExports>(
    await importPeer('@nestjs/terminus', feature),
    'HealthIndicatorService',
  );
  const Service = terminus.HealthIndicatorService;
  try {
    return moduleRef.get(Service, { strict: false }) ?? new Service();
  } catch {
    return new Service(); // TerminusModule is not imported: a session helper of our own does the same
  }
}

// @opentelemetry/api ---------------------------------------------------------------------------------

let otel: OtelApiModule | null | undefined;
let otelLoading: Promise<OtelApiModule | null> | undefined;

/**
 * Loads `@opentelemetry/api` once, lazily. Not installed gives null: telemetry is then a no-op and
 * nothing else is imported. Any other loading failure is thrown.
 */
export function loadOtelApi(): Promise<OtelApiModule | null> {
  if (otel !== undefined) return Promise.resolve(otel);
  otelLoading ??= importPeer<unknown>('@opentelemetry/api', 'telemetry').then(
    (mod) => (otel = exportsOf<OtelApiModule>(mod, 'trace')),
    (err: unknown) => {
      if (!(err instanceof MissingPeerError)) throw err;
      return (otel = null);
    },
  );
  return otelLoading;
}

/** The API if an earlier `loadOtelApi()` (any `EmailModule` with telemetry on) loaded it; null otherwise. */
export function loadedOtelApi(): OtelApiModule | null {
  return otel ?? null;
}

// bullmq, @nestjs/bullmq (ioredis: ioredis.loader.ts) ----------------------------------------------

/** The parts of BullMQ the queue uses. */
export type BullMq = typeof import('bullmq');

/** Loads `bullmq`; the error says what to install when it is missing. */
export function loadBullMq(): BullMq {
  return requirePeer<BullMq>('bullmq', 'EmailQueueModule');
}

/** The parts of `@nestjs/bullmq` the queue uses. */
export interface NestBullMq {
  /** The token of `BullModule.forRoot(configKey?)`'s shared config. */
  getSharedConfigToken: (configKey?: string) => string;
  /** `@Processor(...)`: marks a `WorkerHost` class as the worker of a queue. */
  Processor: (queue: { name: string; configKey?: string }, workerOptions?: object) => ClassDecorator;
  /** The base class of every `@nestjs/bullmq` worker. */
  WorkerHost: abstract new () => { readonly worker: unknown };
}

/** `@nestjs/bullmq` (loaded the app's way: `import()` in the ES build, `require` in the CommonJS one), or undefined when it is not installed. */
export async function loadNestBullMq(): Promise<NestBullMq | undefined> {
  try {
    return exportsOf<NestBullMq>(
      await importPeer('@nestjs/bullmq', 'EmailQueueModule'),
      'getSharedConfigToken',
    );
  } catch (err) {
    if (err instanceof MissingPeerError) return undefined;
    throw err;
  }
}

/** The constructor of pg-boss 10/11 (CommonJS, `module.exports = PgBoss`) or 12 (ES module, `export class PgBoss`). */
export type PgBossClass = typeof import('pg-boss');
export type PgModule = typeof import('pg');

/** Loads `pg-boss` (optional peer) for the outbox; the error says what to install when it is missing. */
export function loadPgBoss(): PgBossClass {
  const mod = requirePeer<unknown>('pg-boss', 'EmailOutboxModule') as { PgBoss?: unknown; default?: unknown };
  return (mod.PgBoss ?? (typeof mod === 'function' ? mod : mod.default)) as PgBossClass;
}

/**
 * How the loaded pg-boss's `insert` takes its jobs: `insert(jobs, options)` in 10, `insert(name, jobs, options)`
 * from 11. Read from pg-boss's `package.json` (10 and 11 expose `insert` through a wrapper with no named
 * parameters, so its arity tells nothing); when that cannot be read, from 12's own method's arity.
 */
export function pgBossInsertForm(PgBoss: PgBossClass): 'jobs' | 'name' {
  try {
    const { version } = peerRequire()('pg-boss/package.json') as { version?: string };
    const major = Number(String(version).split('.')[0]);
    if (major > 0) return major >= 11 ? 'name' : 'jobs';
  } catch {
    // below
  }
  const insert = (PgBoss.prototype as { insert?: (...args: unknown[]) => unknown }).insert;
  return typeof insert === 'function' && insert.length >= 2 ? 'name' : 'jobs';
}

/** Loads `pg` (optional peer) for the outbox's own pool, or for `feature` (the suppression list's store). */
export function loadPg(feature = 'EmailOutboxModule'): PgModule {
  const mod = requirePeer<PgModule & { default?: PgModule }>('pg', feature);
  return mod.Pool ? mod : (mod.default as PgModule);
}

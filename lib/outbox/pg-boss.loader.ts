import { requirePeer } from '../config/optional-peer.loader.js';

/** The constructor of pg-boss 10/11 (CommonJS, `module.exports = PgBoss`) or 12 (ES module, `export class PgBoss`). */
export type PgBossClass = typeof import('pg-boss');
export type PgModule = typeof import('pg');

/** Loads `pg-boss` (optional peer); the error says what to install when it is missing. */
export function loadPgBoss(): PgBossClass {
  const mod = requirePeer<unknown>('pg-boss', 'EmailOutboxModule') as { PgBoss?: unknown; default?: unknown };
  return (mod.PgBoss ?? (typeof mod === 'function' ? mod : mod.default)) as PgBossClass;
}

/** Loads `pg` (optional peer) for the outbox's own pool. */
export function loadPg(): PgModule {
  const mod = requirePeer<PgModule & { default?: PgModule }>('pg', 'EmailOutboxModule');
  return mod.Pool ? mod : (mod.default as PgModule);
}

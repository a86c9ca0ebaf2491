import type { Pool } from 'pg';
import type { ResolvedEmailOptions } from '../interfaces/email-module-options.interface.js';
import type { RedisConnectionInput } from '../peers/ioredis.loader.js';
import type { DeliveryObserver } from '../telemetry/delivery.telemetry.js';
import { MemorySuppressionStore } from './memory-suppression.store.js';
import { PostgresSuppressionStore } from './postgres-suppression.store.js';
import { RedisSuppressionStore } from './redis-suppression.store.js';
import type { SuppressionStore } from './suppression-store.interface.js';
import { SuppressionGate } from './suppression.engine.js';

/** The store the checked options name: memory, Redis (its own, or `rateRedis`: the `rateLimit` limiter's client), PostgreSQL. */
function storeOf(resolved: ResolvedEmailOptions, rateRedis: unknown): SuppressionStore {
  const { suppression: o } = resolved;
  if (!o.enabled || o.store.kind === 'memory') return new MemorySuppressionStore();
  if (o.store.kind === 'redis') {
    // its own Redis, or the limiter's: an error then names `rateLimit.redis`, the option the app set
    const own = o.store.redis !== undefined;
    return new RedisSuppressionStore(
      (own ? o.store.redis : rateRedis) as RedisConnectionInput,
      o.store.prefix,
      o.commandTimeoutMs,
      own ? 'suppression.redis' : 'rateLimit.redis',
    );
  }
  return new PostgresSuppressionStore(o.store.postgres as string | Pool, o.store.schema, o.commandTimeoutMs);
}

/**
 * The gate of one module instance (`open` loads its list). With `suppression: false`, a gate that holds
 * nothing and learns nothing (a send then reads one boolean).
 */
export function createSuppressionGate(
  resolved: ResolvedEmailOptions,
  rateRedis: unknown,
  observer: DeliveryObserver,
): SuppressionGate {
  const options = resolved.suppression.enabled
    ? resolved.suppression
    : { ...resolved.suppression, learn: false as const };
  return new SuppressionGate({
    store: storeOf(resolved, rateRedis),
    options,
    observer,
    logger: resolved.logger,
  });
}

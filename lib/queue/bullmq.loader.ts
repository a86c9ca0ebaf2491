import { requirePeer } from '../config/optional-peer.loader.js';

/** The parts of BullMQ and ioredis the queue uses. */
export type BullMq = typeof import('bullmq');
export type IoRedisModule = typeof import('ioredis');

/** Loads `bullmq` (optional peer); the error says what to install when it is missing. */
export function loadBullMq(): BullMq {
  return requirePeer<BullMq>('bullmq', 'EmailQueueModule');
}

/** Loads `ioredis` (optional peer); the error says what to install when it is missing. */
export function loadIoRedis(): IoRedisModule['Redis'] {
  const mod = requirePeer<IoRedisModule & { default?: IoRedisModule['Redis'] }>(
    'ioredis',
    'EmailQueueModule',
  );
  return mod.Redis ?? (mod.default as IoRedisModule['Redis']);
}

import type { ModuleRef } from '@nestjs/core';
import { MissingPeerError, importPeer } from '../config/optional-peer.loader.js';
import type { EmailQueueConnection } from './email-queue.options.js';

/** What the queue reads from `BullModule.forRoot(...)`'s shared config. */
export interface BullSharedConfig {
  connection?: EmailQueueConnection;
  prefix?: string;
}

type NestBullMq = { getSharedConfigToken: (configKey?: string) => string };

/**
 * The shared config of `@nestjs/bullmq`'s `BullModule.forRoot(configKey?, ...)` when the app has one, or
 * undefined. `@nestjs/bullmq` is an optional peer, loaded only here and only when the queue is given no
 * `connection` of its own.
 */
export async function findBullSharedConfig(
  moduleRef: ModuleRef,
  configKey?: string,
): Promise<BullSharedConfig | undefined> {
  let token: string;
  try {
    const nest = await importPeer<NestBullMq & { default?: NestBullMq }>(
      '@nestjs/bullmq',
      'EmailQueueModule',
    );
    const tokenOf = nest.getSharedConfigToken ?? nest.default?.getSharedConfigToken;
    if (!tokenOf) return undefined;
    token = tokenOf(configKey);
  } catch (err) {
    if (err instanceof MissingPeerError) return undefined;
    throw err;
  }
  try {
    return moduleRef.get<BullSharedConfig>(token, { strict: false }) ?? undefined;
  } catch {
    return undefined; // no BullModule.forRoot with this key in the app
  }
}

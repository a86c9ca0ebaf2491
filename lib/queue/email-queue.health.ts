import { Inject, Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { HealthIndicatorResult } from '@nestjs/terminus';
import { healthIndicatorServiceOf } from '../peers/optional-peer.loader.js';

import { EmailQueueResolvedOptions, type ResolvedEmailQueueOptions } from './email-queue.options.js';
import { withTimeout } from '../time/clock.helpers.js';
import { EmailQueue } from './email-queue.service.js';

/**
 * A `@nestjs/terminus` health indicator for the email queue: `up` with the Redis latency and the
 * waiting, active, delayed and failed job counts; `down` with `reason: 'unreachable'` when Redis does
 * not answer within `timeoutMs`, and with `reason: 'not-durable'` and the `problems` (each naming the
 * setting to change) when the Redis would lose queued emails: no AOF and no RDB snapshots, or an
 * eviction policy other than `noeviction` (`allowVolatileRedis: true` keeps it up, with `warnings`).
 * `@nestjs/terminus` is an optional peer loaded on first use.
 *
 * @example
 * check() { return this.health.check([() => this.queueHealth.isHealthy('email-queue')]); }
 * @publicApi
 */
@Injectable()
export class EmailQueueHealthIndicator {
  constructor(
    @Inject(EmailQueue) private readonly queue: EmailQueue,
    @Inject(ModuleRef) private readonly moduleRef: ModuleRef,
    @Inject(EmailQueueResolvedOptions) private readonly options: ResolvedEmailQueueOptions,
  ) {}

  /** Pings Redis and counts jobs; reports down rather than throwing. */
  async isHealthy<const Key extends string = 'email-queue'>(
    key: Key = 'email-queue' as Key,
    options: { timeoutMs?: number } = {},
  ): Promise<HealthIndicatorResult<Key>> {
    const session = (await healthIndicatorServiceOf(this.moduleRef, 'EmailQueueHealthIndicator')).check(key);
    const started = performance.now();
    const timeoutMs = options.timeoutMs ?? 3000;
    try {
      const probe = (async () => {
        await this.queue.ping();
        const latencyMs = Math.round(performance.now() - started);
        const [counts, durability] = await Promise.all([
          this.queue.bullQueue.getJobCounts('waiting', 'active', 'delayed', 'failed'),
          this.queue.durability(),
        ]);
        return { latencyMs, counts, durability };
      })();
      const { latencyMs, counts, durability } = await withTimeout(probe, timeoutMs, 'Redis');
      const { problems } = durability;
      if (problems.length > 0 && !this.options.allowVolatileRedis) {
        return session.down({ reason: 'not-durable', problems, latencyMs, ...counts });
      }
      return session.up({ latencyMs, ...counts, ...(problems.length > 0 ? { warnings: problems } : {}) });
    } catch (err) {
      return session.down({ reason: 'unreachable', message: (err as Error).message });
    }
  }
}

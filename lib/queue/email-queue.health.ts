import { Inject, Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { importPeer } from '../config/optional-peer.loader.js';
import { EmailQueue } from './email-queue.service.js';

type TerminusExports = { HealthIndicatorService: new () => HealthIndicatorService };

/**
 * A `@nestjs/terminus` health indicator for the email queue: `up` with the Redis latency and the
 * waiting, active, delayed and failed job counts; `down` with the reason when Redis does not answer
 * within `timeoutMs`. `@nestjs/terminus` is an optional peer loaded on first use.
 *
 * @example
 * check() { return this.health.check([() => this.queueHealth.isHealthy('email-queue')]); }
 * @publicApi
 */
@Injectable()
export class EmailQueueHealthIndicator {
  private indicators?: Promise<HealthIndicatorService>;

  constructor(
    @Inject(EmailQueue) private readonly queue: EmailQueue,
    @Inject(ModuleRef) private readonly moduleRef: ModuleRef,
  ) {}

  /** Pings Redis and counts jobs; reports down rather than throwing. */
  async isHealthy<const Key extends string = 'email-queue'>(
    key: Key = 'email-queue' as Key,
    options: { timeoutMs?: number } = {},
  ): Promise<HealthIndicatorResult<Key>> {
    const session = (await this.healthIndicatorService()).check(key);
    const started = performance.now();
    const timeoutMs = options.timeoutMs ?? 3000;
    let timer: NodeJS.Timeout | undefined;
    try {
      const probe = (async () => {
        await this.queue.ping();
        return this.queue.bullQueue.getJobCounts('waiting', 'active', 'delayed', 'failed');
      })();
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`Redis did not answer within ${timeoutMs} ms`)), timeoutMs);
      });
      const counts = await Promise.race([probe, timeout]);
      return session.up({ latencyMs: Math.round(performance.now() - started), ...counts });
    } catch (err) {
      return session.down({ reason: 'unreachable', message: (err as Error).message });
    } finally {
      clearTimeout(timer);
    }
  }

  private healthIndicatorService(): Promise<HealthIndicatorService> {
    this.indicators ??= importPeer<TerminusExports & { default?: TerminusExports }>(
      '@nestjs/terminus',
      'EmailQueueHealthIndicator',
    ).then((terminus) => {
      const Service = terminus.HealthIndicatorService ?? terminus.default?.HealthIndicatorService;
      try {
        return this.moduleRef.get(Service, { strict: false }) ?? new Service();
      } catch {
        return new Service();
      }
    });
    return this.indicators;
  }
}

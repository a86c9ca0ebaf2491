import { Inject, Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { HealthIndicatorResult } from '@nestjs/terminus';
import { healthIndicatorServiceOf } from '../peers/optional-peer.loader.js';
import { withTimeout } from '../time/clock.helpers.js';
import { EmailOutbox } from './email-outbox.service.js';

/**
 * A `@nestjs/terminus` health indicator for the email outbox: `up` with the PostgreSQL latency and the
 * backlog (jobs not sent yet); `down` with `reason: 'unreachable'` and a message (host, port and database,
 * never a password) when PostgreSQL does not answer within `timeoutMs`. `@nestjs/terminus` is an optional
 * peer loaded on first use.
 *
 * @example
 * check() { return this.health.check([() => this.outboxHealth.isHealthy('email-outbox')]); }
 * @publicApi
 */
@Injectable()
export class EmailOutboxHealthIndicator {
  constructor(
    @Inject(EmailOutbox) private readonly outbox: EmailOutbox,
    @Inject(ModuleRef) private readonly moduleRef: ModuleRef,
  ) {}

  /** Pings PostgreSQL and counts the backlog; reports down rather than throwing. */
  async isHealthy<const Key extends string = 'email-outbox'>(
    key: Key = 'email-outbox' as Key,
    options: { timeoutMs?: number } = {},
  ): Promise<HealthIndicatorResult<Key>> {
    const session = (await healthIndicatorServiceOf(this.moduleRef, 'EmailOutboxHealthIndicator')).check(key);
    const started = performance.now();
    const timeoutMs = options.timeoutMs ?? 3000;
    try {
      const probe = (async () => {
        await this.outbox.ping();
        const latencyMs = Math.round(performance.now() - started);
        return { latencyMs, backlog: await this.outbox.backlog() };
      })();
      const { latencyMs, backlog } = await withTimeout(probe, timeoutMs, 'PostgreSQL');
      return session.up({ latencyMs, backlog });
    } catch (err) {
      return session.down({ reason: 'unreachable', message: (err as Error).message });
    }
  }
}

import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { LocalRedis } from './local-redis.js';

/** Token of the embedded redis-server (null when REDIS_URL points at another Redis). */
export const LOCAL_REDIS = Symbol('LOCAL_REDIS');

/** Stops the embedded redis-server, if any, when the app shuts down (after the email queue's own hooks). */
@Injectable()
export class LocalRedisLifecycle implements OnApplicationShutdown {
  constructor(@Inject(LOCAL_REDIS) private readonly redis: LocalRedis | null) {}

  async onApplicationShutdown(): Promise<void> {
    if (!this.redis) return;
    await this.redis.stop();
    new Logger('Sample').log('Stopped the embedded redis-server');
  }
}

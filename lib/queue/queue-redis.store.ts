import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { Queue } from 'bullmq';
import type { Cluster, Redis } from 'ioredis';
import { EmailError } from '../errors/email.error.js';
import { loadBullMq } from '../peers/optional-peer.loader.js';
import { settledBy } from '../time/clock.helpers.js';
import { queueConnection } from './queue-connection.helpers.js';
import { EmailQueueResolvedOptions, type ResolvedEmailQueueOptions } from './email-queue.options.js';
import { checkRedisDurability, type RedisDurability } from './redis-durability.policy.js';

/**
 * The queue's Redis, a provider of its own, made with the module: the connection that queues, reads and checks
 * (`producer`: it fails fast while Redis is away and never replays a command), the BullMQ `Queue` on it, and
 * the worker's connections (`workerConnection`: they wait for Redis). Closes them all when the app closes,
 * within `closeTimeoutMs` whatever Redis does.
 */
@Injectable()
export class QueueRedis implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('EmailQueue');
  /** The BullMQ queue underneath (for dashboards such as Bull Board, and metrics). */
  readonly queue: Queue;
  /** Queues, reads and checks: fails fast while Redis is away, never replays a command. */
  readonly producer: Redis | Cluster;
  private readonly connections: Array<Redis | Cluster> = [];
  private queueReady = false;
  private closeDeadline?: number;

  constructor(@Inject(EmailQueueResolvedOptions) private readonly options: ResolvedEmailQueueOptions) {
    const bull = loadBullMq();
    this.producer = this.connect('producer');
    this.queue = new bull.Queue(options.queueName, {
      ...(options.prefix !== undefined ? { prefix: options.prefix } : {}),
      connection: this.producer,
    });
    this.queue.on('error', () => undefined);
    this.queue.waitUntilReady().then(
      () => (this.queueReady = true),
      () => undefined,
    );
  }

  /** Nest lifecycle hook: warns, without holding up the boot, when the Redis would lose queued emails. */
  onApplicationBootstrap(): void {
    void (async () => {
      const ready = await settledBy(this.queue.waitUntilReady(), Date.now() + 10_000);
      if (!ready || this.closeDeadline !== undefined) return;
      const { problems } = await this.durability();
      for (const problem of problems) this.logger.warn(`Redis would lose queued emails: ${problem}`);
    })();
  }

  /** True once the producer connection is up (waiting for it at most `ms`). */
  async connectedWithin(ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    for (;;) {
      if (this.queueReady && this.producer.status === 'ready') return true;
      if (Date.now() >= deadline || this.closeDeadline !== undefined) return false;
      await new Promise((r) => setTimeout(r, Math.min(20, Math.max(1, deadline - Date.now()))));
    }
  }

  /** Redis answers a PING (used by the health indicator). */
  async ping(): Promise<void> {
    if (!(await this.connectedWithin(this.options.commandTimeoutMs)))
      throw new EmailError(
        `No connection to Redis within ${this.options.commandTimeoutMs} ms (${this.producer.status})`,
      );
    await this.producer.ping();
  }

  /** Whether this Redis keeps queued emails through a restart and under memory pressure (CONFIG GET). */
  durability(): Promise<RedisDurability> {
    return checkRedisDurability(this.producer);
  }

  /** A connection of the queue's own for the worker: it waits for Redis instead of failing fast. */
  workerConnection(): Redis | Cluster {
    return this.connect('worker');
  }

  /** Nest lifecycle hook: closes the queue and the Redis connections, within `closeTimeoutMs` whatever Redis does. */
  async onApplicationShutdown(): Promise<void> {
    const deadline = (this.closeDeadline ??= Date.now() + this.options.closeTimeoutMs);
    await settledBy(this.queue.close(), deadline);
    await Promise.all(
      this.connections.map(async (c) => {
        if (c.status === 'ready') await settledBy(c.quit(), deadline);
        // after a clean QUIT the connection has ended; disconnect() would only start another timer
        if (c.status !== 'end') c.disconnect();
      }),
    );
  }

  /**
   * A connection of the queue's own (a single Redis or a Redis Cluster). The producer's refuses commands
   * while Redis is away (no offline queue) and never replays an unanswered one after a reconnect; the
   * worker's waits for Redis.
   */
  private connect(role: 'producer' | 'worker'): Redis | Cluster {
    const conn = queueConnection(this.options.connection, role, this.options.commandTimeoutMs);
    this.connections.push(conn);
    return conn;
  }
}

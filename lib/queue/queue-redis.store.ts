import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleInit,
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
 *
 * Nothing connects while Nest builds the app: the connections open when the module initialises (or at their
 * first use, in a module never initialised). An app whose boot fails on another provider (a bad setting, say)
 * is never closed, so connections opened while it was built would keep reconnecting for the life of the process.
 */
@Injectable()
export class QueueRedis implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('EmailQueue');
  private readonly connections: Array<Redis | Cluster> = [];
  private opened?: { readonly producer: Redis | Cluster; readonly queue: Queue };
  private queueReady = false;
  private closeDeadline?: number;

  constructor(@Inject(EmailQueueResolvedOptions) private readonly options: ResolvedEmailQueueOptions) {
    loadBullMq(); // a missing peer fails the boot, as it always did
  }

  /** The BullMQ queue underneath (for dashboards such as Bull Board, and metrics). */
  get queue(): Queue {
    return this.open().queue;
  }

  /** Queues, reads and checks: fails fast while Redis is away, never replays a command. */
  get producer(): Redis | Cluster {
    return this.open().producer;
  }

  /** Nest lifecycle hook: opens the producer connection and the BullMQ queue on it. */
  onModuleInit(): void {
    this.open();
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
    const { producer } = this.open();
    for (;;) {
      if (this.queueReady && producer.status === 'ready') return true;
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
    if (this.opened) await settledBy(this.opened.queue.close(), deadline);
    await Promise.all(
      this.connections.map(async (c) => {
        if (c.status === 'ready') await settledBy(c.quit(), deadline);
        // after a clean QUIT the connection has ended; disconnect() would only start another timer
        if (c.status !== 'end') c.disconnect();
      }),
    );
  }

  /** The producer and the queue, opened at the first call. */
  private open(): { readonly producer: Redis | Cluster; readonly queue: Queue } {
    if (this.opened) return this.opened;
    const bull = loadBullMq();
    const producer = this.connect('producer');
    const queue = new bull.Queue(this.options.queueName, {
      ...(this.options.prefix !== undefined ? { prefix: this.options.prefix } : {}),
      connection: producer,
    });
    queue.on('error', () => undefined);
    queue.waitUntilReady().then(
      () => (this.queueReady = true),
      () => undefined,
    );
    this.opened = { producer, queue };
    return this.opened;
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

import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import type { Worker } from 'bullmq';
import { closeSpareMs } from '../policy/job.policy.js';
import { settledBy } from '../time/clock.helpers.js';
import { loadBullMq } from '../peers/optional-peer.loader.js';
import { type BullJobData, emailWorkerOptions, processEmailJob } from './email-queue-host.worker.js';
import { EmailQueueResolvedOptions, type ResolvedEmailQueueOptions } from './email-queue.options.js';
import { EmailQueue } from './email-queue.service.js';

/**
 * The token of the queue's `@nestjs/bullmq` processor: a `WorkerHost` when the app has `@nestjs/bullmq` and
 * the queue runs on `BullModule.forRoot`'s config, else an empty object.
 */
export abstract class EmailQueueProcessorHost {}

/**
 * The queue's worker, a provider of its own. When `worker` is on it sends the queue's jobs: through the
 * `@nestjs/bullmq` processor that `@nestjs/bullmq` starts (an app with `BullModule.forRoot` whose config the
 * queue uses), or else through a BullMQ `Worker` of its own. Either way it stops first when the app closes,
 * letting jobs in flight finish within `closeTimeoutMs`.
 * @publicApi
 */
@Injectable()
export class EmailQueueWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private own?: Worker<BullJobData>;
  private stopped = false;

  constructor(
    @Inject(EmailQueueResolvedOptions) private readonly options: ResolvedEmailQueueOptions,
    private readonly queue: EmailQueue,
    @Inject(EmailQueueProcessorHost) private readonly host: { readonly worker?: Worker },
  ) {}

  /** The BullMQ worker that sends the queue's jobs in this process (undefined with `worker: false`). */
  get worker(): Worker | undefined {
    if (this.own) return this.own;
    try {
      return this.host.worker;
    } catch {
      return undefined; // a WorkerHost whose worker @nestjs/bullmq has not started
    }
  }

  /** Nest lifecycle hook (starts the worker when `@nestjs/bullmq` does not): called by Nest, not by you. */
  onApplicationBootstrap(): void {
    if (!this.options.worker || this.own || this.worker) return;
    const bull = loadBullMq();
    const o = this.options;
    const worker = new bull.Worker<BullJobData>(
      o.queueName,
      (job, token) => processEmailJob(this.queue, bull, job, token),
      {
        ...(o.prefix !== undefined ? { prefix: o.prefix } : {}),
        ...emailWorkerOptions(o),
        connection: this.queue.workerConnection(),
      },
    );
    worker.on('error', () => undefined);
    this.own = worker;
  }

  /**
   * Nest lifecycle hook: lets jobs in flight finish (until `closeTimeoutMs` nearly runs out), then stops.
   * With Redis away it stops at once: BullMQ's graceful close first waits for its blocking connection to
   * end, which ioredis never reports for a connection waiting to reconnect, so the close would never get
   * to stop the worker's lock and stalled-job timers (they would outlive the app). Jobs in flight then
   * cannot record their outcome anyway; their records see them as interrupted, as when a worker dies.
   */
  async beforeApplicationShutdown(): Promise<void> {
    const worker = this.worker;
    if (!worker || this.stopped) return;
    this.stopped = true;
    const deadline = Date.now() + this.options.closeTimeoutMs;
    // Leave some of the time to drop the connections should the worker not end (the table's margin).
    const spare = closeSpareMs(this.options.closeTimeoutMs);
    const force = !(await redisUp(worker));
    if (force) await settledBy(endAtNextTry(worker), deadline - spare);
    if (!(await settledBy(worker.close(force), deadline - spare)))
      void worker.disconnect().catch(() => undefined);
  }
}

/**
 * Whether both connections of a BullMQ worker are up now. Never waits: a connection BullMQ has not made
 * yet counts as down (its promise is still pending, so the settled `undefined` listed after it wins).
 */
async function redisUp(worker: Worker): Promise<boolean> {
  const backend = worker.getBackend();
  for (const client of [backend.client, backend.blockingClient]) {
    if (client === undefined) continue;
    const made = await Promise.race([client, undefined]).catch(() => undefined);
    // a Redis Cluster says 'connect' once it is up (as BullMQ reads it)
    if (!made || !(made.status === 'ready' || (made.isCluster && made.status === 'connect'))) return false;
  }
  return true;
}

/**
 * Ends the worker's blocking connection when it next tries to reach Redis. ioredis's `disconnect()` leaves
 * a connection that waits to reconnect waiting for ever, its commands unanswered: BullMQ's blocking fetch
 * would then keep its watchdog timer (seconds) after the app has closed. Ended while it tries, the
 * connection ends and fails them. The wait is at most its retry delay (the caller bounds it).
 */
async function endAtNextTry(worker: Worker): Promise<void> {
  const blocking = worker.getBackend().blockingClient;
  const client = blocking && (await Promise.race([blocking, undefined]).catch(() => undefined));
  if (!client || client.isCluster || client.status !== 'reconnecting') return;
  await new Promise<void>((resolve) =>
    client.once('connecting', () => {
      client.disconnect();
      resolve();
    }),
  );
}

import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import type { Worker } from 'bullmq';
import { settledBy } from '../jobs/email-job.helpers.js';
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

  /** Nest lifecycle hook: lets jobs in flight finish (until `closeTimeoutMs` nearly runs out), then stops. */
  async beforeApplicationShutdown(): Promise<void> {
    const worker = this.worker;
    if (!worker || this.stopped) return;
    this.stopped = true;
    const deadline = Date.now() + this.options.closeTimeoutMs;
    // Leave a tenth of the time (at most 1 s) to stop the worker should it not end.
    const spare = Math.min(1000, this.options.closeTimeoutMs / 10);
    if (!(await settledBy(worker.close(), deadline - spare))) {
      await settledBy(worker.close(true), deadline - spare / 2);
      void worker.disconnect().catch(() => undefined);
    }
  }
}

import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import type { Job, Worker } from 'bullmq';
import { settledBy } from '../jobs/email-job.helpers.js';
import { type BullMq, loadBullMq } from '../peers/optional-peer.loader.js';
import { EmailQueueResolvedOptions, type ResolvedEmailQueueOptions } from './email-queue.options.js';
import { EmailQueue } from './email-queue.service.js';

/** What BullMQ's job holds: the job id; the module's record holds the rest. */
interface BullJobData {
  jobId: string;
  idempotencyKey: string;
}

/**
 * The queue's worker, a provider of its own (as `@nestjs/bullmq`'s `WorkerHost` processors are): when
 * `worker` is on, it runs a BullMQ `Worker` whose `process` hands each job to the job layer and carries out
 * the answer. A job is never retried by BullMQ's own counter: the job's record counts attempts, and a job
 * to try again later is moved back to BullMQ's delayed set, which spends nothing.
 * @publicApi
 */
@Injectable()
export class EmailQueueWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private bull?: BullMq;
  private running?: Worker<BullJobData>;

  constructor(
    @Inject(EmailQueueResolvedOptions) private readonly options: ResolvedEmailQueueOptions,
    private readonly queue: EmailQueue,
  ) {}

  /** The BullMQ worker underneath, once started (undefined with `worker: false`). */
  get worker(): Worker | undefined {
    return this.running;
  }

  /** Nest lifecycle hook (starts the worker): called by Nest, not by you. */
  onApplicationBootstrap(): void {
    if (!this.options.worker || this.running) return;
    const bull = (this.bull = loadBullMq());
    const o = this.options;
    const worker = new bull.Worker<BullJobData>(o.queueName, (job, token) => this.process(job, token), {
      ...(o.prefix !== undefined ? { prefix: o.prefix } : {}),
      concurrency: o.concurrency,
      // BullMQ applies a queue-wide pause (queue.rateLimit) only to workers that have a limiter.
      limiter: { max: Number.MAX_SAFE_INTEGER, duration: 1000 },
      ...o.workerOptions,
      // The job's record counts worker deaths (`maxStalledCount`), so BullMQ never fails a job for them.
      maxStalledCount: Number.MAX_SAFE_INTEGER,
      connection: this.queue.workerConnection(),
    });
    worker.on('error', () => undefined);
    this.running = worker;
  }

  /** One delivery of a BullMQ job: the job layer decides, this carries it out in BullMQ's terms. */
  async process(job: Job<BullJobData>, token?: string): Promise<unknown> {
    const bull = this.bull as BullMq;
    const verdict = await this.queue.run(job.data.jobId);
    switch (verdict.kind) {
      case 'sent':
        return verdict.record;
      case 'dropped':
        return null;
      case 'failed':
        throw new bull.UnrecoverableError(verdict.error.message);
      case 'later':
        if (verdict.pauseMs !== undefined) {
          // A 429: every worker of the queue, in every process, waits; the job goes back as it was.
          await this.queue.bullQueue.rateLimit(verdict.pauseMs);
          throw new bull.RateLimitError();
        }
        await job.moveToDelayed(verdict.atMs, token);
        throw new bull.DelayedError();
      case 'retry':
        await job.moveToDelayed(verdict.atMs, token);
        throw new bull.DelayedError();
    }
  }

  /** Nest lifecycle hook: lets jobs in flight finish (until `closeTimeoutMs` nearly runs out), then stops. */
  async beforeApplicationShutdown(): Promise<void> {
    const worker = this.running;
    if (!worker) return;
    this.running = undefined;
    const deadline = Date.now() + this.options.closeTimeoutMs;
    // Leave a tenth of the time (at most 1 s) to stop the worker should it not end.
    const spare = Math.min(1000, this.options.closeTimeoutMs / 10);
    if (!(await settledBy(worker.close(), deadline - spare))) {
      await settledBy(worker.close(true), deadline - spare / 2);
      void worker.disconnect().catch(() => undefined);
    }
  }
}

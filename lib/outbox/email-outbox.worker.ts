import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { settledBy } from '../jobs/email-job.helpers.js';
import { EmailOutboxResolvedOptions, type ResolvedEmailOutboxOptions } from './email-outbox.options.js';
import { EmailOutbox } from './email-outbox.service.js';

/** A job as pg-boss's fetch hands it over. */
interface FetchedJob {
  id: string;
  data: { jobId: string };
}

/**
 * The outbox's worker, a provider of its own: `concurrency` loops of pg-boss's fetch (each job taken by one
 * process with SKIP LOCKED) that hand each job to the job layer and carry out the answer. A loop that found
 * a job fetches again at once; an idle one waits `pollingIntervalMs` (the loops take turns). A job to try
 * later is given back to pg-boss at once with a later start, so a long 429 pause holds no job and lets none
 * expire; this process's loops then fetch nothing until the pause ends.
 * @publicApi
 */
@Injectable()
export class EmailOutboxWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('EmailOutbox');
  private running = false;
  private loops: Array<Promise<void>> = [];
  /** pg-boss ids of the jobs this process's loops are sending now. */
  private readonly inFlight = new Set<string>();
  /** Until when this process's loops fetch nothing, after a 429 (pg-boss has no queue-wide pause). */
  private pausedUntil = 0;
  private lastPurge = 0;

  constructor(
    @Inject(EmailOutboxResolvedOptions) private readonly options: ResolvedEmailOutboxOptions,
    private readonly outbox: EmailOutbox,
  ) {}

  /** Nest lifecycle hook (starts the loops): called by Nest, not by you. */
  onApplicationBootstrap(): void {
    if (!this.options.worker || this.running) return;
    this.running = true;
    this.loops = Array.from({ length: this.options.concurrency }, (_, i) =>
      this.loop(i).catch((err: unknown) =>
        this.logger.error(`outbox worker stopped: ${(err as Error).message}`),
      ),
    );
  }

  /** Nest lifecycle hook: lets jobs in flight finish (until `closeTimeoutMs` nearly runs out), then stops. */
  async beforeApplicationShutdown(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    const deadline = Date.now() + this.options.closeTimeoutMs;
    const spare = Math.min(1000, this.options.closeTimeoutMs / 10);
    await settledBy(Promise.all(this.loops), deadline - spare);
    // Jobs still in flight are given back at once: another process takes them (the record knows the attempt).
    const left = [...this.inFlight];
    await settledBy(
      Promise.all(left.map((id) => this.outbox.engine.putBack(id, Date.now()).catch(() => undefined))),
      deadline - spare / 2,
    );
  }

  private async loop(i: number): Promise<void> {
    const o = this.options;
    const boss = this.outbox.pgBoss;
    // Idle loops poll in turn, not all at once: a new job waits about pollingIntervalMs / concurrency / 2.
    await this.idle((i * o.pollingIntervalMs) / o.concurrency);
    while (this.running) {
      if (this.pausedUntil > Date.now()) {
        await this.idle(this.pausedUntil - Date.now());
        continue;
      }
      await this.maintain();
      let job: FetchedJob | undefined;
      try {
        const jobs = (await boss.fetch(o.queueName, { batchSize: 1 } as never)) as
          FetchedJob[] | FetchedJob | null;
        job = (Array.isArray(jobs) ? jobs[0] : jobs) ?? undefined;
      } catch (err) {
        this.logger.debug(`fetch failed: ${(err as Error).message}`);
      }
      if (!job) {
        await this.idle(o.pollingIntervalMs);
        continue;
      }
      this.inFlight.add(job.id);
      try {
        await this.process(job);
      } catch (err) {
        // PostgreSQL failed under the attempt: pg-boss takes the job back when it expires (same key, one email).
        this.logger.debug(`job ${job.data.jobId}: ${(err as Error).message}`);
      } finally {
        this.inFlight.delete(job.id);
      }
    }
  }

  /** One delivery: the job layer decides, this carries it out in pg-boss's terms. */
  private async process(job: FetchedJob): Promise<void> {
    const engine = this.outbox.engine;
    const verdict = await this.outbox.run(job.data.jobId);
    switch (verdict.kind) {
      case 'sent':
        return engine.finish(job.id, { record: verdict.record });
      case 'dropped':
        return engine.finish(job.id, null);
      case 'failed':
        return engine.finish(job.id, { error: verdict.error });
      case 'later':
        if (verdict.pauseMs !== undefined) this.pausedUntil = Math.max(this.pausedUntil, verdict.atMs);
        return engine.putBack(job.id, verdict.atMs);
      case 'retry':
        return engine.putBack(job.id, verdict.atMs);
    }
  }

  /** Deletes old records now and then (pg-boss's maintenance does the same for its own rows). */
  private async maintain(): Promise<void> {
    const now = Date.now();
    if (now - this.lastPurge < this.options.maintenanceIntervalMs) return;
    this.lastPurge = now;
    await this.outbox.engine.purge().catch(() => undefined);
  }

  /** Waits `ms`, or less when the app starts closing. */
  private async idle(ms: number): Promise<void> {
    const until = Date.now() + ms;
    while (this.running && Date.now() < until)
      await new Promise((r) => setTimeout(r, Math.min(50, until - Date.now())));
  }
}

import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { settledBy } from '../jobs/email-job.helpers.js';
import type { HeldJob, JobVerdict } from '../jobs/email-job.interface.js';
import { loadPg } from '../peers/optional-peer.loader.js';
import { EmailOutboxResolvedOptions, type ResolvedEmailOutboxOptions } from './email-outbox.options.js';
import { EmailOutbox } from './email-outbox.service.js';
import { OutboxNotifyListener } from './outbox-notify.listener.js';
import type { EngineOutcome } from './pgboss.backend.js';

/** A job as pg-boss's fetch hands it over. */
interface FetchedJob {
  id: string;
  data: { jobId: string };
}

/** Future wake-ups this process remembers (jobs given back or written for later); past that, polling finds them. */
const MAX_TIMED_WAKES = 1000;

/**
 * The outbox's worker, a provider of its own. One fetch loop per process takes as many jobs as it has free
 * slots (`concurrency`) in one pg-boss fetch (`batchSize`, SKIP LOCKED: each job in one process), reads their
 * records in one query, runs each through the job layer at once, and ends the finished ones in pg-boss with
 * one statement for all those that finished meanwhile. It fetches again when half its slots are free and the
 * last fetch was full, or when a transaction that wrote a job commits (a NOTIFY on a LISTEN connection of its own), or
 * when a job it gave back falls due, and otherwise every `pollingIntervalMs` (the fallback). A job to try later
 * is given back to pg-boss at once with a later start, so a long 429 pause holds no job and lets none expire;
 * this process then fetches nothing until the pause ends.
 * @publicApi
 */
@Injectable()
export class EmailOutboxWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('EmailOutbox');
  private running = false;
  private loop?: Promise<void>;
  private listener?: OutboxNotifyListener;
  /** Jobs being sent now (their slots). */
  private busy = 0;
  /** pg-boss ids of this process's jobs not yet ended in pg-boss (given back on close). */
  private readonly inFlight = new Set<string>();
  private readonly tasks = new Set<Promise<void>>();
  /** The last fetch filled every free slot: there may be more. */
  private more = true;
  /** A notification (or a due time) came since the last fetch began. */
  private dirty = false;
  private nextPollAt = 0;
  private wakeUp?: () => void;
  private readonly timedWakes: number[] = [];
  private wakeTimer?: NodeJS.Timeout;
  /** Until when this process fetches nothing, after a 429 (pg-boss has no queue-wide pause). */
  private pausedUntil = 0;
  private lastPurge = 0;
  /** Ends waiting to be written to pg-boss, and the write under way (one statement for all that wait). */
  private endings: Array<{ engineId: string; outcome: EngineOutcome; done: () => void }> = [];
  private ending?: Promise<void>;
  /** For benchmarks and specs: fetches made, fetches that found nothing, notifications heard. @internal */
  readonly stats = { fetches: 0, emptyFetches: 0, notifications: 0, jobs: 0 };

  constructor(
    @Inject(EmailOutboxResolvedOptions) private readonly options: ResolvedEmailOutboxOptions,
    private readonly outbox: EmailOutbox,
  ) {}

  /** Nest lifecycle hook (listens and starts fetching): called by Nest, not by you. */
  onApplicationBootstrap(): void {
    if (!this.options.worker || this.running) return;
    this.running = true;
    this.listener = new OutboxNotifyListener(
      loadPg(),
      this.options.connection,
      this.outbox.engine.channel,
      (payload) => this.notified(payload),
      () => this.poke(),
      (message) => this.logger.debug(message),
    );
    this.listener.start();
    this.loop = this.fetchLoop().catch((err: unknown) =>
      this.logger.error(`outbox worker stopped: ${(err as Error).message}`),
    );
  }

  /** True while the worker hears commits at once (its LISTEN connection is up). */
  get listening(): boolean {
    return this.listener?.listening ?? false;
  }

  /** Nest lifecycle hook: lets jobs in flight finish (until `closeTimeoutMs` nearly runs out), then stops. */
  async beforeApplicationShutdown(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.wakeUp?.();
    clearTimeout(this.wakeTimer);
    const deadline = Date.now() + this.options.closeTimeoutMs;
    const spare = Math.min(1000, this.options.closeTimeoutMs / 10);
    await settledBy(this.listener?.close() ?? Promise.resolve(), deadline - spare);
    await settledBy(this.loop ?? Promise.resolve(), deadline - spare);
    await settledBy(Promise.all([...this.tasks]), deadline - spare);
    await settledBy(this.flushEndings(), deadline - spare);
    // Jobs still in flight are given back at once: another process takes them (the record knows the attempt).
    const left = [...this.inFlight];
    await settledBy(
      Promise.all(left.map((id) => this.outbox.engine.putBack(id, Date.now()).catch(() => undefined))),
      deadline - spare / 2,
    );
  }

  private async fetchLoop(): Promise<void> {
    const o = this.options;
    while (this.running) {
      const now = Date.now();
      if (this.pausedUntil > now) {
        await this.sleep(this.pausedUntil - now);
        continue;
      }
      await this.maintain();
      const free = o.concurrency - this.busy;
      // With work known to wait (the last fetch was full), fetch once half the slots are free (or all, for a
      // concurrency of 1): fuller batches, while the other half keeps sending.
      const refill = this.more && (free >= Math.ceil(o.concurrency / 2) || this.busy === 0);
      if (free <= 0 || !(refill || this.dirty || now >= this.nextPollAt)) {
        await this.sleep(free <= 0 ? o.pollingIntervalMs : this.nextPollAt - now);
        continue;
      }
      this.dirty = false;
      this.nextPollAt = now + o.pollingIntervalMs;
      const jobs = await this.fetch(free);
      this.more = jobs.length === free;
      if (jobs.length === 0) continue;
      if (!this.running) {
        // Closing: another process takes them at once.
        await Promise.all(
          jobs.map((j) => this.outbox.engine.putBack(j.id, Date.now()).catch(() => undefined)),
        );
        break;
      }
      let records: Map<string, HeldJob> | undefined;
      try {
        records = await this.outbox.engine.readMany(jobs.map((j) => j.data.jobId));
      } catch {
        // each job reads its own record instead
      }
      for (const job of jobs) this.start(job, records ? (records.get(job.data.jobId) ?? null) : undefined);
    }
  }

  private async fetch(batchSize: number): Promise<FetchedJob[]> {
    this.stats.fetches++;
    try {
      const found = (await this.outbox.pgBoss.fetch(this.options.queueName, { batchSize } as never)) as
        FetchedJob[] | FetchedJob | null;
      const jobs = Array.isArray(found) ? found : found ? [found] : [];
      if (jobs.length === 0) this.stats.emptyFetches++;
      return jobs;
    } catch (err) {
      this.logger.debug(`fetch failed: ${(err as Error).message}`);
      return [];
    }
  }

  /** Runs one fetched job in a slot of its own; the slot frees when the job layer has answered. */
  private start(job: FetchedJob, first: HeldJob | null | undefined): void {
    this.busy++;
    this.stats.jobs++;
    this.inFlight.add(job.id);
    const run = this.process(job, first)
      .catch((err: unknown) => {
        // PostgreSQL failed under the attempt: pg-boss takes the job back when it expires (same key, one email).
        this.logger.debug(`job ${job.data.jobId}: ${(err as Error).message}`);
      })
      .finally(() => {
        this.inFlight.delete(job.id);
        this.tasks.delete(run);
      });
    this.tasks.add(run);
  }

  /** One delivery: the job layer decides, this carries it out in pg-boss's terms. */
  private async process(job: FetchedJob, first: HeldJob | null | undefined): Promise<void> {
    const engine = this.outbox.engine;
    let verdict: JobVerdict;
    try {
      verdict = await this.outbox.run(job.data.jobId, first);
    } finally {
      this.busy--;
      if (this.more || this.dirty) this.wakeUp?.();
    }
    switch (verdict.kind) {
      case 'sent':
        return this.end(job.id, { record: verdict.record });
      case 'dropped':
        return this.end(job.id, null);
      case 'failed':
        return this.end(job.id, { error: verdict.error });
      case 'later':
        if (verdict.pauseMs !== undefined) this.pausedUntil = Math.max(this.pausedUntil, verdict.atMs);
        await engine.putBack(job.id, verdict.atMs);
        return this.wakeAt(verdict.atMs);
      case 'retry':
        await engine.putBack(job.id, verdict.atMs);
        return this.wakeAt(verdict.atMs);
    }
  }

  /**
   * Ends a job in pg-boss: the ends that arrive while one write is under way go together in the next
   * (one statement however many, and no wait when nothing else is being written).
   */
  private end(engineId: string, outcome: EngineOutcome): Promise<void> {
    return new Promise<void>((done) => {
      this.endings.push({ engineId, outcome, done });
      if (!this.ending) this.ending = this.flushEndings();
    });
  }

  private async flushEndings(): Promise<void> {
    while (this.endings.length > 0) {
      const batch = this.endings;
      this.endings = [];
      try {
        await this.outbox.engine.finishMany(batch);
      } catch (err) {
        // Left active: pg-boss takes them back when they expire, and the record (sent, failed) drops them then.
        this.logger.debug(`ending ${batch.length} jobs in pg-boss failed: ${(err as Error).message}`);
      }
      for (const e of batch) e.done();
    }
    this.ending = undefined;
  }

  /** A commit wrote a job (payload empty) or a job due at a later time (payload: its time in ms). */
  private notified(payload: string): void {
    this.stats.notifications++;
    const at = payload === '' ? NaN : Number(payload);
    if (Number.isFinite(at) && at > Date.now()) return this.wakeAt(at);
    this.poke();
  }

  /** Look for jobs now (unless every slot is busy: a slot that frees looks then). */
  private poke(): void {
    this.dirty = true;
    this.wakeUp?.();
  }

  /** Looks for jobs at `atMs` (a job given back or written for later falls due). */
  private wakeAt(atMs: number): void {
    if (!this.running) return;
    const wakes = this.timedWakes;
    if (wakes.length >= MAX_TIMED_WAKES && atMs >= (wakes[wakes.length - 1] as number)) return;
    let i = wakes.length;
    while (i > 0 && (wakes[i - 1] as number) > atMs) i--;
    wakes.splice(i, 0, atMs);
    if (wakes.length > MAX_TIMED_WAKES) wakes.pop();
    if (i === 0) this.armWakeTimer();
  }

  private armWakeTimer(): void {
    clearTimeout(this.wakeTimer);
    const next = this.timedWakes[0];
    if (next === undefined || !this.running) return;
    // pg-boss compares start_after with the database's clock: a few ms later, so that the job is due there too.
    this.wakeTimer = setTimeout(
      () => {
        const now = Date.now();
        while (this.timedWakes.length > 0 && (this.timedWakes[0] as number) <= now) this.timedWakes.shift();
        this.poke();
        this.armWakeTimer();
      },
      Math.max(0, next - Date.now()) + 5,
    );
    this.wakeTimer.unref?.();
  }

  /** Deletes old records now and then (pg-boss's maintenance does the same for its own rows). */
  private async maintain(): Promise<void> {
    const now = Date.now();
    if (now - this.lastPurge < this.options.maintenanceIntervalMs) return;
    this.lastPurge = now;
    await this.outbox.engine.purge().catch(() => undefined);
  }

  /** Waits up to `ms`, less when woken (a notification, a slot that frees, a due job) or when the app closes. */
  private async sleep(ms: number): Promise<void> {
    if (!this.running) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, Math.max(0, ms));
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = done;
    });
    this.wakeUp = undefined;
  }
}

import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { settledBy } from '../time/clock.helpers.js';
import type { HeldJob, JobVerdict } from '../jobs/email-job.interface.js';
import { loadPg } from '../peers/optional-peer.loader.js';
import { EmailOutboxResolvedOptions, type ResolvedEmailOutboxOptions } from './email-outbox.options.js';
import { EmailOutbox } from './email-outbox.service.js';
import { OutboxNotifyListener } from './outbox-notify.listener.js';
import type { EngineOutcome, OutboxSendSlots } from './outbox-engine.interface.js';

/** A job as pg-boss's fetch hands it over; `held`: its record, when the fetch read it too (null: none). */
interface FetchedJob {
  id: string;
  data: { jobId: string };
  held?: HeldJob | null;
}

/** Future wake-ups this process remembers (jobs given back or written for later); past that, polling finds them. */
const MAX_TIMED_WAKES = 1000;

/** A job whose attempt failed on the database starts again this much later (see `giveBackLater`). */
const STORE_FAILURE_RETRY_MS = 1000;
/** How long the worker tries to give such a job back while the database does not answer. */
const STORE_FAILURE_GIVE_BACK_MS = 30_000;

/**
 * The outbox's worker, a provider of its own. At most `concurrency` sends are in flight; the database work
 * around them is kept off those send slots, as a bare pg-boss batch worker does. One fetch loop per process
 * holds up to twice `concurrency` jobs before their sends: it takes as many as it has room for in one pg-boss
 * fetch (`batchSize`, SKIP LOCKED: each job in one process) that reads their records in the same statement,
 * and runs each through the job layer at once. Their claims (each record `active`, its attempt counted,
 * before its send) go in one statement, with the outcomes waiting beside them; a claimed job sends when a
 * send slot is free, and the slot frees when the send has answered. The outcomes that arrive while a
 * statement is under way go together in the next, each final one ending its pg-boss job in that same
 * statement: about 2 statements per fetched batch (fetch and read; claims and outcomes). The first fetch
 * that finds its room full gives the queue's pg-boss table statistics if it has none (see
 * `ensureStatistics`). It fetches again when the last fetch was full, when a transaction that
 * wrote a job commits (a NOTIFY on a LISTEN connection of its own), when a job it gave back falls due, and
 * otherwise every `pollingIntervalMs` (the fallback); while it holds jobs, only once half its room is free.
 * Old records are purged beside the loop, never in its way. A job to try later is given
 * back to pg-boss at once with a later start, so a long 429 pause holds no job and lets none expire; this
 * process then fetches nothing until the pause ends.
 * @publicApi
 */
@Injectable()
export class EmailOutboxWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('EmailOutbox');
  private running = false;
  private loop?: Promise<void>;
  private listener?: OutboxNotifyListener;
  /** Jobs in the job layer now (claiming, waiting for a send slot, sending, recording the outcome). */
  private busy = 0;
  /** Jobs fetched whose records are being read (they take room). */
  private reading = 0;
  /** Jobs whose send has answered and whose outcome is being recorded: they leave room to fetch more. */
  private readonly recording = new Set<string>();
  /** Job ids that hold a send slot now, and the claimed jobs waiting for one (at most `concurrency` send). */
  private readonly sending = new Set<string>();
  private readonly slotWaiters: Array<() => void> = [];
  /** Job ids this worker runs now (only their attempts take send slots), each with its pg-boss id. */
  private readonly runningIds = new Map<string, { runs: number; engineId: string }>();
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
  private purging = false;
  /** The queue's table was given statistics if it had none (`ensureStatistics`, at the first full fetch). */
  private statisticsAsked = false;
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
    this.outbox.engine.sendSlots = this.sendSlots;
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
    // A batch being read starts its jobs when its read answers: those are waited for too.
    while (this.tasks.size > 0 && Date.now() < deadline - spare)
      await settledBy(Promise.all([...this.tasks]), deadline - spare);
    await settledBy(this.flushEndings(), deadline - spare);
    // Jobs still in flight are given back at once: another process takes them (the record knows the attempt).
    const left = [...this.inFlight];
    await settledBy(
      Promise.all(left.map((id) => this.outbox.engine.putBack(id, Date.now()).catch(() => undefined))),
      deadline - spare / 2,
    );
  }

  /**
   * The send slots as the backend sees each attempt go by (the job layer itself knows no slots): a claimed
   * job of this worker waits here for a free slot before its send; its slot frees when its outcome is about
   * to be written, or when its run ends, whichever comes first. A final outcome ends the pg-boss job this
   * worker took (its id as fetched: no hash to compute per email).
   */
  private readonly sendSlots: OutboxSendSlots = {
    sendStarting: (jobId) => {
      if (!this.runningIds.has(jobId) || this.sending.has(jobId)) return Promise.resolve();
      if (this.sending.size < this.options.concurrency) {
        this.sending.add(jobId);
        return Promise.resolve();
      }
      return new Promise<void>((go) =>
        this.slotWaiters.push(() => {
          this.sending.add(jobId);
          go();
        }),
      );
    },
    sendEnded: (jobId) => {
      if (!this.sending.delete(jobId)) return;
      this.recording.add(jobId);
      this.slotWaiters.shift()?.();
      if (this.more || this.dirty) this.wakeUp?.();
    },
    takenId: (jobId) => this.runningIds.get(jobId)?.engineId,
  };

  private async fetchLoop(): Promise<void> {
    const o = this.options;
    // Room for the jobs being sent and as many more being claimed, so that a send slot that frees finds a
    // claimed job ready, never a round trip to the database (jobs recording their outcome take no room).
    const hold = 2 * o.concurrency;
    while (this.running) {
      const now = Date.now();
      if (this.pausedUntil > now) {
        await this.sleep(this.pausedUntil - now);
        continue;
      }
      this.maintain();
      const free = hold - (this.busy - this.recording.size) - this.reading;
      // A reason to look: the last fetch was full, a commit or a due time woke us, or the poll is due.
      if (now >= this.nextPollAt) this.dirty = true;
      if (!(this.more || this.dirty)) {
        await this.sleep(this.nextPollAt - now);
        continue;
      }
      // While jobs are held, fetch once half the room is free (as many jobs as send slots), not for every
      // slot that frees: a fetch costs the database about as much for one job as for ten, and under a
      // steady flow of commits one fetch per commit would cut what the worker sends. The next batch is
      // fetched and claimed while the jobs held keep the send slots busy; each job that ends wakes the loop.
      if (free <= 0 || (free < Math.ceil(hold / 2) && this.busy > 0)) {
        await this.sleep(o.pollingIntervalMs);
        continue;
      }
      this.dirty = false;
      this.nextPollAt = now + o.pollingIntervalMs;
      const jobs = await this.fetch(free);
      this.more = jobs.length === free;
      if (this.more && !this.statisticsAsked) {
        this.statisticsAsked = true;
        this.beside(() => this.outbox.engine.ensureStatistics());
      }
      if (jobs.length === 0) continue;
      if (!this.running) {
        // Closing: another process takes them at once.
        await Promise.all(
          jobs.map((j) => this.outbox.engine.putBack(j.id, Date.now()).catch(() => undefined)),
        );
        break;
      }
      if (jobs.every((j) => j.held !== undefined)) {
        for (const job of jobs) this.start(job, job.held);
        continue;
      }
      // Read (one query) and started apart from this loop, which may fetch again meanwhile.
      this.reading += jobs.length;
      for (const job of jobs) this.inFlight.add(job.id);
      const started = this.readAndStart(jobs).finally(() => this.tasks.delete(started));
      this.tasks.add(started);
    }
  }

  /** Reads the records of a fetched batch in one query, then runs each job. */
  private async readAndStart(jobs: FetchedJob[]): Promise<void> {
    let records: Map<string, HeldJob> | undefined;
    try {
      records = await this.outbox.engine.readMany(jobs.map((j) => j.data.jobId));
    } catch {
      // each job reads its own record instead
    }
    this.reading -= jobs.length;
    for (const job of jobs) this.start(job, records ? (records.get(job.data.jobId) ?? null) : undefined);
  }

  private async fetch(batchSize: number): Promise<FetchedJob[]> {
    this.stats.fetches++;
    try {
      // One statement that fetches and reads the records, where it can run; else pg-boss's fetch alone.
      const withRecords = await this.outbox.engine.fetchWithRecords(batchSize);
      if (withRecords !== null) {
        if (withRecords.length === 0) this.stats.emptyFetches++;
        return withRecords;
      }
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
    const jobId = job.data.jobId;
    const running = this.runningIds.get(jobId);
    if (running) running.runs++;
    else this.runningIds.set(jobId, { runs: 1, engineId: job.id });
    const run = this.process(job, first)
      .catch((err: unknown) => {
        // PostgreSQL failed under the attempt (its claim or its outcome not written): the job is given back once
        // the database answers again; failing that, pg-boss takes it back when it expires. Either way the next
        // attempt sends with the same key, so the service replays an email that went out.
        this.logger.debug(`job ${jobId}: ${(err as Error).message}`);
        return this.giveBackLater(job.id);
      })
      .finally(() => {
        this.inFlight.delete(job.id);
        this.engineEnded(job.id);
        this.tasks.delete(run);
      });
    this.tasks.add(run);
  }

  /** One delivery: the job layer decides, this carries it out in pg-boss's terms. */
  private async process(job: FetchedJob, first: HeldJob | null | undefined): Promise<void> {
    let verdict: JobVerdict;
    const jobId = job.data.jobId;
    try {
      verdict = await this.outbox.run(jobId, first);
    } finally {
      this.busy--;
      const running = this.runningIds.get(jobId);
      if (running && --running.runs === 0) this.runningIds.delete(jobId);
      this.sendSlots.sendEnded(jobId);
      this.recording.delete(jobId);
      if (this.more || this.dirty) this.wakeUp?.();
    }
    switch (verdict.kind) {
      case 'sent':
        // Usually ended already, in the statement that wrote the record `sent`.
        if (this.engineEnded(job.id)) return;
        return this.end(job.id, { record: verdict.record });
      case 'dropped':
        return this.end(job.id, null);
      case 'failed':
        if (this.engineEnded(job.id)) return;
        return this.end(job.id, { error: verdict.error });
      case 'later':
        if (verdict.pauseMs !== undefined) this.pausedUntil = Math.max(this.pausedUntil, verdict.atMs);
        return this.giveBack(job.id, verdict.atMs);
      case 'retry':
        return this.giveBack(job.id, verdict.atMs);
    }
  }

  /** Gives a taken job back to pg-boss to start at `atMs`, and looks for jobs then. */
  private async giveBack(engineId: string, atMs: number): Promise<void> {
    await this.outbox.engine.putBack(engineId, atMs);
    this.wakeAt(atMs);
  }

  /**
   * Gives back a job whose attempt failed on the database, to start `STORE_FAILURE_RETRY_MS` later, trying again
   * with backoff while the database does not answer (a restart, a failover), for `STORE_FAILURE_GIVE_BACK_MS` at
   * most: its record then says where the attempt stopped. Not at once, so that a job whose attempt keeps failing
   * does not spin. Past that bound, or once the app closes, pg-boss takes it back when it expires.
   */
  private async giveBackLater(engineId: string): Promise<void> {
    const until = Date.now() + STORE_FAILURE_GIVE_BACK_MS;
    for (let waitMs = 250; this.running; waitMs = Math.min(1000, waitMs * 2)) {
      try {
        return await this.giveBack(engineId, Date.now() + STORE_FAILURE_RETRY_MS);
      } catch {
        if (Date.now() + waitMs > until) return;
        await new Promise((r) => setTimeout(r, waitMs).unref?.());
      }
    }
  }

  /** True when the statement that wrote the job's final record ended its pg-boss job too (see the backend). */
  private engineEnded(engineId: string): boolean {
    return this.outbox.engine.takeEnded(engineId);
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

  /**
   * Deletes old records now and then (pg-boss's maintenance does the same for its own rows), beside the
   * fetch loop: a purge of a large table takes tens of ms, and the loop must not wait for it to fetch.
   */
  private maintain(): void {
    const now = Date.now();
    if (this.purging || now - this.lastPurge < this.options.maintenanceIntervalMs) return;
    this.lastPurge = now;
    this.purging = true;
    this.beside(() => this.outbox.engine.purge().finally(() => (this.purging = false)));
  }

  /** Runs database upkeep beside the fetch loop (waited for on close); a failure is logged, never thrown. */
  private beside(work: () => Promise<unknown>): void {
    const task = work()
      .then(
        () => undefined,
        (err: unknown) => this.logger.debug(`upkeep failed: ${(err as Error).message}`),
      )
      .finally(() => this.tasks.delete(task));
    this.tasks.add(task);
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

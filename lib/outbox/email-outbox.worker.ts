import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { writeWhenStoreAnswers } from '../jobs/email-job.helpers.js';
import { deliveredOf } from '../jobs/job-record.helpers.js';
import { loadPg } from '../peers/optional-peer.loader.js';
import { closeSpareMs, JOB_STORE_FAILURE } from '../policy/job.policy.js';
import { settledBy } from '../time/clock.helpers.js';
import { EmailOutboxResolvedOptions, type ResolvedEmailOutboxOptions } from './email-outbox.options.js';
import { EmailOutbox } from './email-outbox.service.js';
import { OutboxBoss } from './outbox-boss.store.js';
import { describePgFailure } from './outbox-failure.helpers.js';
import { OutboxOutcomes, outcomeOf, type OutboxOutcome } from './outbox-outcome.store.js';
import { OutboxStandbys } from './outbox-standby.store.js';
import { OutboxWakes } from './outbox-wake.listener.js';
import { type FetchedJob, PgBossBackend } from './pgboss.backend.js';

/**
 * The outbox's worker, a provider of its own, as a bare pg-boss batch worker runs: one loop per process fetches
 * as many due jobs as it has room for in one pg-boss fetch (`batchSize`, SKIP LOCKED: each job in one process;
 * the fetch is the job's claim), holding up to twice `concurrency` jobs, and at most `concurrency` of them run at
 * once (`startSends`), each through the job layer (its send, then its verdict). A slot frees when the send has
 * answered; the outcomes that arrive while one statement is under way are written together in the next
 * (`OutboxOutcomes`), each final one completing or failing its pg-boss job. It fetches again when the last fetch was
 * full, when a commit wrote a job, when a job given back falls due, and otherwise every `pollingIntervalMs`
 * (`OutboxWakes`); while it holds jobs, only once half its room is free. A job to try later goes back to pg-boss at
 * once with a later start, so a long 429 pause holds no job and lets none expire; this process then fetches
 * nothing until the pause ends.
 * @publicApi
 */
@Injectable()
export class EmailOutboxWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('EmailOutbox');
  private running = false;
  private loop?: Promise<void>;
  private wakes?: OutboxWakes;
  private readonly outcomes: OutboxOutcomes;
  /** Holds the sends until the standbys have the jobs' commits (unless `waitForStandbys` is false). @internal */
  readonly standbys?: OutboxStandbys;
  /** Jobs fetched and not yet started, in pg-boss's order. */
  private readonly ready: FetchedJob[] = [];
  /** Jobs in the job layer now (deciding, sending): at most `concurrency`. */
  private sending = 0;
  /** Every job this process took from pg-boss and has not ended there yet, and whether its run began. */
  private readonly taken = new Map<string, { job: FetchedJob; started: boolean }>();
  /** Until when this process fetches nothing, after a 429 (pg-boss has no queue-wide pause). */
  private pausedUntil = 0;
  /** Fetches that failed in a row (PostgreSQL unreachable, read-only, a statement cancelled). */
  private failedFetches = 0;
  /** The queue's table was given statistics if it had none (`ensureStatistics`, at the first full fetch). */
  private statisticsAsked = false;
  /** For benchmarks and specs: fetches made, fetches that found nothing, notifications heard, jobs run. @internal */
  readonly stats = { fetches: 0, emptyFetches: 0, notifications: 0, jobs: 0 };

  constructor(
    @Inject(EmailOutboxResolvedOptions) private readonly options: ResolvedEmailOutboxOptions,
    private readonly outbox: EmailOutbox,
    private readonly engine: PgBossBackend,
    private readonly pgBoss: OutboxBoss,
  ) {
    const keep = { waitingMs: options.keepFailedForMs, sentMs: options.keepSentForMs };
    const standbys = options.waitForStandbys;
    if (standbys !== 'none')
      this.standbys = new OutboxStandbys(
        (text, values) => pgBoss.statements.query(text, values),
        standbys === 'all' ? undefined : standbys,
        (message) => this.logger.warn(message),
      );
    this.outcomes = new OutboxOutcomes(pgBoss.statements, () => pgBoss.sql, options.queueName, keep);
  }

  /** Nest lifecycle hook (listens and starts fetching): called by Nest, not by you. */
  onApplicationBootstrap(): void {
    if (!this.options.worker || this.running) return;
    this.running = true;
    const o = this.options;
    this.wakes = new OutboxWakes(loadPg(), o.listenTo, this.engine.channel, o.pollingIntervalMs, (message) =>
      this.logger.debug(message),
    );
    this.loop = this.fetchLoop().catch((err: unknown) =>
      this.logger.error(`outbox worker stopped: ${(err as Error).message}`),
    );
  }

  /** True while the worker hears commits at once (its LISTEN connection is up). */
  get listening(): boolean {
    return this.wakes?.listening ?? false;
  }

  /**
   * Nest lifecycle hook: lets jobs in flight finish (until `closeTimeoutMs` nearly runs out), then gives back
   * what it still holds, at once: another process takes them (a job whose run began counts as cut off).
   */
  async beforeApplicationShutdown(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    const deadline = Date.now() + this.options.closeTimeoutMs;
    const spare = closeSpareMs(this.options.closeTimeoutMs);
    await settledBy(this.wakes?.close() ?? Promise.resolve(), deadline - spare);
    await settledBy(this.loop ?? Promise.resolve(), deadline - spare);
    while (this.sending > 0 && Date.now() < deadline - spare) await new Promise((r) => setTimeout(r, 20));
    const left = [...this.taken.values()].map(({ job, started }) =>
      this.outcomes.write(backNow(job, started)),
    );
    await settledBy(Promise.all(left.map((w) => w.catch(() => undefined))), deadline - spare / 2);
  }

  private async fetchLoop(): Promise<void> {
    const o = this.options;
    const wakes = this.wakes!;
    // Room for the jobs being sent and as many more, so that a slot that frees finds a job ready, never a round
    // trip to the database.
    const hold = 2 * o.concurrency;
    while (this.running) {
      const now = Date.now();
      if (this.pausedUntil > now) {
        await wakes.sleep(this.pausedUntil - now);
        continue;
      }
      if (!wakes.wants(now)) {
        await wakes.sleep(wakes.untilPoll(now));
        continue;
      }
      // While jobs are held, fetch once half the room is free (as many jobs as send slots), not for every slot
      // that frees: a fetch costs the database about as much for one job as for ten.
      const held = this.sending + this.ready.length;
      const room = hold - held;
      if (room <= 0 || (room < Math.ceil(hold / 2) && held > 0)) {
        await wakes.sleep(o.pollingIntervalMs);
        continue;
      }
      wakes.looked(now);
      const jobs = await this.fetch(room);
      wakes.more = jobs.length === room;
      if (wakes.more && !this.statisticsAsked) {
        this.statisticsAsked = true;
        void this.pgBoss.ensureStatistics().catch((err: unknown) => this.logger.debug(String(err)));
      }
      // A job this process still holds can come back in a fetch (its attempt outlived `attemptTimeoutMs`, or a
      // failover promoted a standby where it waits): the copy held goes on, and writes the job's outcome; the
      // second is dropped, never run beside it nor left to run after the first forgot it.
      const fresh = jobs.filter((job) => !this.taken.has(job.id));
      for (const job of fresh) this.taken.set(job.id, { job, started: false });
      if (!this.running) break; // closing: they are given back
      this.ready.push(...fresh);
      this.startSends();
    }
  }

  private async fetch(batchSize: number): Promise<FetchedJob[]> {
    this.stats.fetches++;
    this.stats.notifications = this.wakes?.notifications ?? 0;
    try {
      const jobs = await this.engine.fetch(batchSize);
      if (jobs.length === 0) this.stats.emptyFetches++;
      else if (!(await this.replicated(jobs))) return [];
      if (this.failedFetches > 0)
        this.logger.log(`fetching again after ${this.failedFetches} failed fetch(es)`);
      this.failedFetches = 0;
      return jobs;
    } catch (err) {
      // The first failure of a run is a warning that says why (a failover, a DBA's limit); the jobs wait
      // in PostgreSQL meanwhile, and the loop tries again at its next poll.
      const line = `fetch failed, jobs wait in PostgreSQL: ${describePgFailure(err)}`;
      if (this.failedFetches++ === 0) this.logger.warn(line);
      else this.logger.debug(line);
      return [];
    }
  }

  /**
   * Whether the standbys have the commits of the jobs just fetched (`OutboxStandbys`), so that a failover cannot
   * lose the rows of an email sent. When PostgreSQL fails meanwhile the jobs go back untouched: on the primary
   * promoted next, each is waiting, taken (given back when its attempt expires) or gone with its rows.
   */
  private async replicated(jobs: FetchedJob[]): Promise<boolean> {
    if (this.standbys === undefined || (await this.standbys.caughtUp(() => this.running))) return true;
    for (const job of jobs) void this.end(job, backNow(job, false));
    return false;
  }

  /** Starts the jobs held, `concurrency` at most at once: the worker's only limit on what it sends. */
  private startSends(): void {
    while (this.running && this.sending < this.options.concurrency && this.ready.length > 0)
      this.run(this.ready.shift()!);
  }

  /** One job through the job layer; its slot frees with the verdict, whose write goes to the batch. */
  private run(job: FetchedJob): void {
    this.sending++;
    this.stats.jobs++;
    const held = this.taken.get(job.id);
    if (held !== undefined) held.started = true;
    const delivered = {
      ...deliveredOf(job.stored, job.takenBack),
      keep: (record: Parameters<typeof this.engine.keep>[1]) =>
        this.engine.keep(job.id, record, job.takenBack),
    };
    void this.outbox
      .run(delivered)
      .then(
        (verdict) => {
          // a 429: this process fetches nothing until the pause ends (pg-boss has no queue-wide pause)
          if (verdict.kind === 'later' && verdict.pauseMs !== undefined)
            this.pausedUntil = Math.max(this.pausedUntil, verdict.atMs);
          return outcomeOf(job.id, job.takenBack, verdict);
        },
        // PostgreSQL failed under the job before its send: it goes back, its record as it was.
        (): OutboxOutcome => ({ id: job.id, kind: 'cut', startMs: Date.now() + JOB_STORE_FAILURE.retryMs }),
      )
      .then((outcome) => {
        this.sending--;
        this.startSends();
        this.wakes?.wake();
        return this.end(job, outcome);
      });
  }

  /**
   * Writes a job's outcome (with others: one statement), trying again while PostgreSQL does not answer (a
   * restart): past that, pg-boss takes the job back when it expires, and the next attempt, counting this one as cut
   * off, sends with the same key (the service replays an email that went out).
   */
  private async end(job: FetchedJob, outcome: OutboxOutcome): Promise<void> {
    const written = await writeWhenStoreAnswers(
      () => this.outcomes.write(outcome),
      () => this.running,
    );
    if (!written) this.logger.debug(`job ${job.stored.jobId}: its outcome was not written (PostgreSQL)`);
    this.taken.delete(job.id);
    if (outcome.startMs !== undefined) this.wakes?.at(outcome.startMs);
  }
}

/** A job this process still holds at close, given back to start now (cut off when its run began). */
function backNow(job: FetchedJob, started: boolean): OutboxOutcome {
  return { id: job.id, kind: started ? 'cut' : 'later', startMs: Date.now() };
}

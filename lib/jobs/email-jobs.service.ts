import { EventEmitter } from 'node:events';
import { EmailError } from '../errors/email.error.js';
import { EmailJobCancelledError, EmailJobConflictError } from '../errors/email-job.error.js';
import { EmailValidationError } from '../errors/email-validation.error.js';
import type { EmailInput } from '../interfaces/email-input.interface.js';
import type {
  EmailJobCancelResult,
  EmailJobEvents,
  EmailJobReceipt,
  EmailJobRecord,
  EmailJobRescheduleResult,
  EmailJobSchedule,
  EmailJobState,
  EmailJobStatus,
} from '../interfaces/email-job.interface.js';
import type { EmailLog } from '../interfaces/email-records.interface.js';
import { mayCancel, mayReschedule, moveJob, type JobLimits } from '../policy/job.policy.js';
import { parseEmailLog } from '../records/email-record.parser.js';
import type { AccountDesk } from '../delivery/account-desk.store.js';
import type { ModuleRef } from '@nestjs/core';
import type { EmailService } from '../service/email.service.js';
import { findEmailService } from './email-job.helpers.js';
import type { ResolvedEmailJobOptions } from './email-job.options.js';
import { captureEmailTraceContext } from '../telemetry/trace-context.helpers.js';
import type { DeliveredJob, EmailJobBackend, HeldJob, JobVerdict } from './email-job.interface.js';
import { leaveLine, runEmailJob, type JobRunDeps } from './email-job.engine.js';
import { checkJobs, jobIdProblem, type EngineOptionRules, type JobSendOptions } from './email-job.rules.js';
import { rebuildJobError } from './job-error.parser.js';
import { stateOf } from './job-record.helpers.js';
import { boundCall, changeJob } from './job-store-call.helpers.js';
import { idempotencyKeyFrom } from './job-identity.helpers.js';

/** What an engine tells the shared layer about itself, beside the options both engines take. */
export interface JobsEngine<O> {
  /** For the unknown-job message: `queue email`, `outbox email`. */
  where: string;
  /** The engine's queue name (job spans, an account's line). */
  queueName: string;
  /** Worker deaths a job survives (the queue's `maxStalledCount`; the outbox: its attempts alone bound them). */
  maxInterruptions: number;
  /** Checks the engine's own send options. */
  engineRules: EngineOptionRules<O>;
}

/** What the shared layer runs with: the engine's part and the options both engines take. */
interface JobsSettings<O> extends JobsEngine<O> {
  commandTimeoutMs: number;
  limits: JobLimits;
  emailService?: string;
}

/**
 * Everything the queue and the outbox share, written once: the checks of `send` (with the app's
 * `defaultFrom`), the job id's one email, `status`, `waitFor`, `cancel`, `reschedule`, the events, and
 * the bound on every store call. `EmailQueue` and `EmailOutbox` extend it, given their engine's adapter
 * (`backend`) and the app's `EmailService` when they are made; the worker of each engine runs `runJob`.
 */
export abstract class EmailJobs<O extends JobSendOptions, Tx> {
  private readonly events = new EventEmitter();

  /** What every delivery of this engine's worker runs with. */
  private readonly runDeps: JobRunDeps;
  private found?: EmailService;

  private readonly settings: JobsSettings<O>;

  constructor(
    engine: JobsEngine<O>,
    options: ResolvedEmailJobOptions,
    /** The engine's adapter (a provider of the engine's module, made before this). */
    protected readonly backend: EmailJobBackend<O, Tx>,
    /** Where the app's `EmailService` is found (see `email`). */
    private readonly moduleRef: ModuleRef,
  ) {
    const { attempts, backoff, commandTimeoutMs, emailService } = options;
    const limits = { maxAttempts: attempts, maxInterruptions: engine.maxInterruptions, backoff };
    const settings = {
      ...engine,
      commandTimeoutMs,
      limits,
      ...(emailService !== undefined ? { emailService } : {}),
    };
    this.settings = settings;
    this.runDeps = {
      pause: (ms) => this.pauseAll(ms),
      desk: (account) => this.email.deskFor({ account }),
      send: (input, options, desk) =>
        // an account's job never waits for its budget in a worker: refused, it goes back to its slot
        desk === undefined ? this.email.send(input, options) : this.email.sendNow(desk, input, options, 0),
      findSent: (input, options) => this.email.findSent(input, options),
      limits,
      queueName: engine.queueName,
      emit: (event, payload) => void this.events.emit(event, payload),
    };
  }

  /**
   * The app's `EmailService` that sends the jobs (the `EmailModule` instance named `emailService`, the default one
   * without), found on first use. It lives in a module beside this one, which this module's providers cannot
   * inject unless it is global, and Nest makes it only once its own options are ready (`forRootAsync`): a
   * look-up when this class is made could meet an instance not made yet. First use comes after the app started.
   */
  protected get email(): EmailService {
    return (this.found ??= findEmailService(this.moduleRef, this.settings.emailService));
  }

  private get commandTimeoutMs(): number {
    return this.settings.commandTimeoutMs;
  }

  /** Hooks into this process's worker events. */
  on<E extends keyof EmailJobEvents>(event: E, listener: EmailJobEvents[E]): this {
    this.events.on(event, listener);
    return this;
  }

  /** Removes a listener added with `on`. */
  off<E extends keyof EmailJobEvents>(event: E, listener: EmailJobEvents[E]): this {
    this.events.off(event, listener);
    return this;
  }

  /**
   * The idempotency key of a job id: the same in every process. A job sent for an account (`{ account }`)
   * has a key derived from the account too: give the same `account` here.
   */
  keyFor(jobId: string, options: { account?: string } = {}): string {
    const { account } = options;
    if (account === undefined) return idempotencyKeyFrom(...this.backend.keyScope, jobId);
    return idempotencyKeyFrom(...this.backend.keyScope, 'account', account, jobId);
  }

  /**
   * Checks the items as `EmailService.send` will send them, then writes them (in `tx` where the engine has
   * one). A job id already kept with the same input is the same job (its receipt again, no second email);
   * with another input, `EmailJobConflictError` (the call's other jobs are written).
   */
  protected async write(
    items: ReadonlyArray<{ input: EmailInput; options?: O }>,
    tx: Tx | undefined,
  ): Promise<EmailJobReceipt[]> {
    const trace = captureEmailTraceContext(); // the request's trace, continued by the worker
    // Every account named is resolved first: an unknown one is refused before anything is written.
    const desks = new Map<string | undefined, AccountDesk>();
    for (const { options } of Array.isArray(items) ? items : []) {
      const account = (options as JobSendOptions | undefined)?.account;
      if (!desks.has(account))
        desks.set(account, await this.email.deskFor(account === undefined ? {} : { account }));
    }
    const jobs = checkJobs(items, {
      defaultFrom: (account) => desks.get(account)?.options.defaultFrom ?? this.email.defaultFrom,
      keyFor: (jobId, account) => this.keyFor(jobId, { account }),
      engineRules: this.settings.engineRules,
      ...(trace ? { trace } : {}),
      now: Date.now(),
    });
    // The suppression list, before anything is written: a job to a suppressed address is refused.
    await this.email.refuseSuppressed(jobs.map(({ record: r }) => ({ to: r.input.to, account: r.account })));
    // A job of an account carries the tag of the key it will first be sent with: the worker writes nothing
    // before that send unless the key was rotated meanwhile (see `runEmailJob`).
    for (const { record } of jobs)
      if (record.account !== undefined) record.keyTag = desks.get(record.account)?.keyTag(record.jobId);
    const jobIds = jobs.map((j) => j.record.jobId);
    const held = await boundCall(
      this.backend,
      this.backend.write(jobs, tx),
      { what: 'writing', jobIds, mayLand: true },
      this.commandTimeoutMs,
    );
    const conflicts = jobIds.filter((_, i) => {
      const kept = held[i];
      return kept != null && kept.record.fingerprint !== jobs[i]?.record.fingerprint;
    });
    if (conflicts.length > 0)
      throw new EmailJobConflictError({ jobIds: conflicts, queued: jobIds.length - conflicts.length });
    return jobs.map((j) => ({ jobId: j.record.jobId, idempotencyKey: j.record.idempotencyKey }));
  }

  /** Where a job is, or null for an unknown job (or one in a transaction not committed yet). */
  async status(jobId: string): Promise<EmailJobStatus | null> {
    const held = await this.readJob(jobId);
    return held ? statusOf(held.record) : null;
  }

  /**
   * Waits until the job is done, at most `timeoutMs` (60 s by default).
   * @returns the message record once sent (the same typed record `EmailService` returns).
   * @throws the job's final error, rebuilt as the matching `EmailError` subclass; EmailJobCancelledError for a
   * cancelled job; EmailError on timeout or for an unknown job; the engine's unavailable error.
   */
  async waitFor(jobId: string, options: { timeoutMs?: number } = {}): Promise<EmailLog> {
    const timeoutMs = options.timeoutMs ?? 60_000;
    const deadline = Date.now() + timeoutMs;
    for (let pause = 20; ; pause = Math.min(pause * 2, 250)) {
      const left = Math.max(1, deadline - Date.now());
      const held = await this.readJob(jobId, Math.min(left, this.commandTimeoutMs));
      if (!held) throw new EmailError(`No email job ${jobId} in ${this.settings.where}`);
      const { record } = held;
      if (record.state === 'sent') return parseEmailLog(record.record, `job ${jobId}`);
      if (record.state === 'failed') throw finalErrorOf(record);
      if (record.state === 'cancelled') throw new EmailJobCancelledError(jobId);
      if (Date.now() >= deadline)
        throw new EmailError(`Email job ${jobId} still ${stateOf(record)} after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, Math.min(pause, Math.max(1, deadline - Date.now()))));
    }
  }

  /**
   * Cancels a job no attempt has started (and none that may have reached the service). With the outbox,
   * in `tx`: the job is cancelled only if that transaction commits, and never both sent and cancelled.
   */
  protected async cancelJob(jobId: string, tx: Tx | undefined): Promise<EmailJobCancelResult> {
    const answer = await this.change(jobId, tx, mayCancel, (r) =>
      moveJob(r, 'cancelled', 'cancel', { finishedAt: Date.now() }),
    );
    if (typeof answer === 'string' || answer === null) return { cancelled: false, state: answer };
    await leaveLine(answer, this.runDeps, this.commandTimeoutMs);
    return { cancelled: true };
  }

  /** Moves the next attempt of a waiting job to `when`. */
  protected async rescheduleJob(
    jobId: string,
    when: EmailJobSchedule,
    tx: Tx | undefined,
  ): Promise<EmailJobRescheduleResult> {
    const atMs = scheduleOf(when);
    const answer = await this.change(jobId, tx, mayReschedule, (r) =>
      moveJob(r, 'waiting', 'reschedule', { runAt: atMs }),
    );
    if (typeof answer === 'string' || answer === null) return { rescheduled: false, state: answer };
    await leaveLine(answer, this.runDeps, this.commandTimeoutMs);
    return { rescheduled: true };
  }

  /** Pauses every job of this engine for `ms` after a 429, before the job is given back (where it can). */
  protected pauseAll(_ms: number): Promise<void> {
    return Promise.resolve();
  }

  /**
   * One delivery of a job by this engine's worker: what the engine must do next, in one write (the verdict).
   * Built once: the deps of every delivery.
   */
  protected runJob(job: DeliveredJob): Promise<JobVerdict> {
    return runEmailJob(job, this.runDeps);
  }

  private readJob(jobId: string, ms = this.commandTimeoutMs): Promise<HeldJob | null> {
    if (jobIdProblem(jobId)) return Promise.resolve(null);
    return boundCall(this.backend, this.backend.read(jobId), { what: `reading ${jobId}` }, ms);
  }

  /** Applies `next` to a waiting job if `allowed` (see `changeJob`), every store call bounded. */
  private change(
    jobId: string,
    tx: Tx | undefined,
    allowed: (r: EmailJobRecord) => boolean,
    next: (r: EmailJobRecord) => EmailJobRecord,
  ): Promise<EmailJobRecord | EmailJobState | null> {
    return changeJob(this.backend, { jobId, tx, allowed, next, ms: this.commandTimeoutMs });
  }
}

/** A job's record as `status` reports it. */
function statusOf(record: EmailJobRecord): EmailJobStatus {
  const state = stateOf(record);
  const status: EmailJobStatus = {
    jobId: record.jobId,
    idempotencyKey: record.idempotencyKey,
    state,
    attempts: record.attempts,
  };
  if (record.state === 'waiting') status.runAt = new Date(record.runAt);
  if (record.state === 'sent' && record.record !== undefined) {
    const log = parseEmailLog(record.record, `job ${record.jobId}`);
    status.record = log;
    status.messageId = log.id;
  }
  if (record.state === 'failed') {
    const error = finalErrorOf(record) as Error & { outcome?: string };
    status.error = {
      name: error.name,
      message: error.message,
      ...(error.outcome ? { outcome: error.outcome } : {}),
    };
  }
  return status;
}

/** The final error a failed job kept, rebuilt as its `EmailError` subclass. */
function finalErrorOf(record: EmailJobRecord): Error {
  return record.error ? rebuildJobError(record.error) : new EmailError(`Email job ${record.jobId} failed`);
}

/** Epoch ms of a schedule. */
function scheduleOf(when: EmailJobSchedule): number {
  const at =
    when && 'at' in when
      ? when.at instanceof Date
        ? when.at.getTime()
        : NaN
      : when && typeof when.delayMs === 'number' && when.delayMs >= 0
        ? Date.now() + when.delayMs
        : NaN;
  if (!Number.isFinite(at))
    throw new EmailValidationError([
      { path: 'when', message: 'must be { delayMs } (milliseconds >= 0) or { at } (a valid Date)' },
    ]);
  return at;
}

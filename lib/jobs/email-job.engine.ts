import { runInEmailJobSpan, runInEmailTraceContext } from '../telemetry/trace-context.helpers.js';
import { EmailError } from '../errors/email.error.js';
import { EmailSendUncertainError } from '../errors/email-send-uncertain.error.js';
import { failureFacts } from '../errors/failure-facts.helpers.js';
import type { AccountDesk } from '../delivery/email-accounts.store.js';
import type { FindSentOptions } from '../interfaces/call-options.interface.js';
import type { BatchEmailItem, EmailInput } from '../interfaces/email-input.interface.js';
import type { EmailJobEvents, EmailJobRecord } from '../interfaces/email-job.interface.js';
import type { EmailLog, FindSentResult } from '../interfaces/email-records.interface.js';
import {
  attemptPlan,
  claimPlan,
  JOB_HELD_RETRY_MS,
  mayHaveCreated,
  type JobLimits,
} from '../policy/job.policy.js';
import type { EmailJobBackend, HeldJob, JobVerdict } from './email-job.interface.js';
import { rebuildJobError, storeJobError } from './job-error.parser.js';

/** What the routine needs besides the job id. */
export interface JobRunDeps<O, Tx> {
  backend: EmailJobBackend<O, Tx>;
  /**
   * `EmailService.send` of the app's `EmailModule`, called with its own retries and look-ups off; on the
   * account's desk for a job sent for an account.
   */
  send: (
    input: EmailInput,
    options: { idempotencyKey: string; maxRetries: 0; reconcile: false },
    desk?: AccountDesk,
  ) => Promise<EmailLog>;
  /** The desk (key, limits) of an account, resolved for each attempt (the resolver's cache applies). */
  desk: (account: string) => AccountDesk | Promise<AccountDesk>;
  /** `EmailService.findSent`: the last resort of a job whose account's key changed after an uncertain attempt. */
  findSent: (input: EmailInput | BatchEmailItem, options: FindSentOptions) => Promise<FindSentResult>;
  limits: JobLimits;
  /** Pauses every job of the engine after a 429 (a job without account), at once (before its record is written). */
  pause: (ms: number) => Promise<void>;
  /** The engine's queue name, for the job span. */
  queueName: string;
  emit: <E extends keyof EmailJobEvents>(event: E, payload: Parameters<EmailJobEvents[E]>[0]) => void;
}

/** Tries before an attempt gives way to a record that keeps changing under it. */
const CLAIM_TRIES = 5;

/**
 * One delivery of a job by its engine (BullMQ for `./queue`, pg-boss for `./outbox`), start to end: takes
 * the job's record (the table's `claimPlan` says whether an attempt may start), sends the same input with
 * the job's key, records the outcome, and answers what the engine must do next. Every attempt sends the
 * same bytes with the same key, so an attempt that follows one that may have been accepted gets the
 * service's replay of its own record, never another job's look-alike.
 */
export async function runEmailJob<O, Tx>(
  jobId: string,
  deps: JobRunDeps<O, Tx>,
  /** The record as an engine that fetches many jobs at once just read it (null: none); read here when absent. */
  first?: HeldJob | null,
): Promise<JobVerdict> {
  // A record read a moment ago is as good as one read now: the claim below compares and sets it anyway.
  let held = first !== undefined ? first : await deps.backend.read(jobId);
  const account = held === null ? undefined : await accountOf(held.record, deps);
  if (held && account?.laterMs !== undefined) {
    // Its status says when it comes back (its slot in the account's line), as `delayed`.
    await deps.backend.replace(held, { ...held.record, runAt: account.laterMs }).catch(() => false);
    return { kind: 'later', atMs: account.laterMs };
  }
  for (let tries = 0; held && tries < CLAIM_TRIES; tries++) {
    const plan = claimPlan(held.record, Date.now(), deps.limits);
    if (plan.next === 'drop') return { kind: 'dropped' };
    if (plan.next === 'later') return { kind: 'later', atMs: plan.atMs };
    const next =
      plan.next === 'end' ? ended(plan.record, plan.asUncertain) : withKeyTag(plan.record, account);
    if (await deps.backend.replace(held, next)) {
      if (plan.next === 'end') return failedVerdict(next, deps);
      const token = deps.backend.tokenAfter?.(held);
      const claimed = token === undefined ? undefined : { record: next, token };
      if (account?.failure !== undefined) return afterFailure(next, account.failure, deps, claimed);
      if (account?.rotated) return lastResort(next, account.desk!, deps, claimed);
      return attempt(next, deps, claimed, account?.desk);
    }
    const again = await deps.backend.read(jobId);
    // Unchanged, yet not replaced: another transaction holds it (a cancel under way). Look again soon.
    if (again && again.token === held.token) return { kind: 'later', atMs: Date.now() + JOB_HELD_RETRY_MS };
    held = again;
  }
  return held ? { kind: 'later', atMs: Date.now() + JOB_HELD_RETRY_MS } : { kind: 'dropped' };
}

/** A job's account as its attempt needs it: the desk, or why it cannot be used, or when to come back. */
interface JobAccount {
  desk?: AccountDesk;
  /** The resolver refused or failed: the attempt ends with it (the job's attempts and table decide). */
  failure?: unknown;
  /** The account is paused or has no room: come back then, no attempt spent and no worker held meanwhile. */
  laterMs?: number;
  /** The tag of the key this attempt would use. */
  keyTag?: string;
  /** An earlier attempt may have been accepted under another key of the account. */
  rotated?: boolean;
}

/**
 * The account of a job that may start an attempt now: its desk, and whether its budgets have room. A job
 * of a paused or busy account is given back to its engine for a slot in the account's line
 * (`SendRateLimiter.reserve`: one slot per job, at the pace the budget allows), so a backlog of one
 * account never holds the workers that other accounts' jobs need. Only a job that is due and finds no room
 * takes a slot (a job written for later, cancelled or rolled back never holds one), and it leaves the line once
 * it gets room.
 */
async function accountOf<O, Tx>(
  job: EmailJobRecord,
  deps: JobRunDeps<O, Tx>,
): Promise<JobAccount | undefined> {
  if (job.account === undefined || (job.state !== 'waiting' && job.state !== 'active')) return undefined;
  let desk: AccountDesk;
  try {
    desk = await deps.desk(job.account);
  } catch (failure) {
    return { failure };
  }
  const recipients = job.input.to.length;
  const due = job.state === 'waiting' && job.runAt <= Date.now(); // not due: the claim gives it back anyway
  const room = due && desk.rate !== null ? await desk.rate.roomIn(recipients) : undefined;
  const member = lineMemberOf(job, deps.queueName);
  if (room !== undefined && room.ms > 0) return { laterMs: await laterFor(desk, recipients, room, member) };
  if (room !== undefined && desk.rate?.paced) void desk.rate.release(member); // it leaves the line
  const keyTag = desk.keyTag(job.jobId);
  // a job found active was cut off mid-attempt: that attempt may have been accepted too
  const mayBeAccepted = job.uncertain || job.state === 'active';
  return { desk, keyTag, rotated: mayBeAccepted && job.keyTag !== undefined && job.keyTag !== keyTag };
}

/**
 * When a job of an account without room comes back: at its slot in the account's line, at the earliest when
 * the account has room again (the window's end, the pause's end), so that a backlog comes back at the pace
 * the budget allows and the end of a pause is not every job at once.
 */
function laterFor(
  desk: AccountDesk,
  recipients: number,
  room: { ms: number; paused: boolean },
  member: string,
): Promise<number> {
  return desk.rate!.reserve(recipients, Date.now() + room.ms, member);
}

/** A job's name in its account's line (the engine's queue and the job id: one account serves both engines). */
export function lineMemberOf(job: Pick<EmailJobRecord, 'jobId'>, queueName: string): string {
  return `${queueName} ${job.jobId}`;
}

/**
 * The record an attempt runs under, with the tag of its account's key. An uncertain job keeps the tag of
 * the key that may have been accepted: a rotation is then seen by every later attempt.
 */
function withKeyTag(record: EmailJobRecord, account: JobAccount | undefined): EmailJobRecord {
  if (account?.keyTag === undefined || (record.uncertain && record.keyTag !== undefined)) return record;
  return { ...record, keyTag: account.keyTag };
}

/**
 * An attempt after one that may have been accepted under another key of the account: the service's replay
 * of the Idempotency-Key may not hold across keys (the contract does not say), so nothing is sent again.
 * The message log (read with the account's key) is the last resort: a record proven to be this job's own
 * is adopted, else the job ends `EmailSendUncertainError` with its key. Never a second email.
 */
async function lastResort<O, Tx>(
  job: EmailJobRecord,
  desk: AccountDesk,
  deps: JobRunDeps<O, Tx>,
  claimed?: HeldJob,
): Promise<JobVerdict> {
  const { idempotencyKey } = job;
  let found: FindSentResult | undefined;
  let cause: unknown;
  try {
    const since = new Date(job.createdAt);
    found = await deps.findSent(job.input, { account: desk.accountId, since, maxRetries: 1 });
  } catch (err) {
    cause = err;
  }
  if (found?.record) return sent(job, found.record, deps, claimed);
  const reason = new EmailError(
    `the account's API key changed after an attempt that may have been accepted under the old key, and the message log ${
      cause === undefined
        ? `does not prove one of its records is this job's (${found?.certainty})`
        : 'could not be read'
    }: not sent again, so as never to send it twice`,
    { cause },
  );
  const error = new EmailSendUncertainError({ idempotencyKey, attempts: job.attempts, cause: reason });
  const record: EmailJobRecord = {
    ...job,
    state: 'failed',
    error: storeJobError(error),
    finishedAt: Date.now(),
  };
  await settle(job, record, deps, claimed);
  return failedVerdict(record, deps);
}

/** The record of a job that may start no attempt any more. */
function ended(record: EmailJobRecord, asUncertain: boolean): EmailJobRecord {
  const cause = new EmailError(
    `the job's attempts ran out (${record.attempts} started, ${record.interruptions} of them cut off by a worker that died or timed out)`,
  );
  const error = asUncertain
    ? new EmailSendUncertainError({ idempotencyKey: record.idempotencyKey, attempts: record.attempts, cause })
    : record.error
      ? rebuildJobError(record.error)
      : cause;
  return { ...record, state: 'failed', error: storeJobError(error), finishedAt: Date.now() };
}

/** A job that ended without an email (or uncertain): reported as final, and the engine fails its job. */
function failedVerdict<O, Tx>(record: EmailJobRecord, deps: JobRunDeps<O, Tx>): JobVerdict {
  const error = record.error
    ? rebuildJobError(record.error)
    : new EmailError(`Email job ${record.jobId} failed`);
  deps.emit('failed', { jobId: record.jobId, idempotencyKey: record.idempotencyKey, error, final: true });
  return { kind: 'failed', error };
}

/**
 * Sends once and records the outcome; `job` is the job as this attempt took it (`claimed`: as the store holds
 * it, with its token, where the store could tell).
 */
async function attempt<O, Tx>(
  job: EmailJobRecord,
  deps: JobRunDeps<O, Tx>,
  claimed?: HeldJob,
  desk?: AccountDesk,
): Promise<JobVerdict> {
  const { jobId, idempotencyKey } = job;
  let log: EmailLog;
  try {
    // The attempt continues the trace of the request that queued the job, in an `email.job` span.
    log = await runInEmailTraceContext(job.trace, () =>
      runInEmailJobSpan(
        { queueName: deps.queueName, jobId, attempt: job.attempts, idempotencyKey },
        spanOutcomeOf,
        // Never a looked-up record: another worker may have sent the same content. The key's replay
        // returns this job's own record if an earlier attempt was accepted.
        () => deps.send(job.input, { idempotencyKey, maxRetries: 0, reconcile: false }, desk),
      ),
    );
  } catch (err) {
    return afterFailure(job, err, deps, claimed, desk);
  }
  return sent(job, log, deps, claimed);
}

/** The job's email exists and `log` is its own record: the record says so, the event tells it. */
async function sent<O, Tx>(
  job: EmailJobRecord,
  log: EmailLog,
  deps: JobRunDeps<O, Tx>,
  claimed?: HeldJob,
): Promise<JobVerdict> {
  // Kept as the log itself: every store writes the record as JSON (its dates as ISO text), so the copy as
  // JSON that stood here cost a stringify and a parse per email for the same stored text.
  const record: unknown = log;
  await settle(job, { ...job, state: 'sent', record, finishedAt: Date.now() }, deps, claimed);
  deps.emit('sent', { jobId: job.jobId, idempotencyKey: job.idempotencyKey, record: log });
  return { kind: 'sent', record };
}

async function afterFailure<O, Tx>(
  job: EmailJobRecord,
  err: unknown,
  deps: JobRunDeps<O, Tx>,
  claimed?: HeldJob,
  desk?: AccountDesk,
): Promise<JobVerdict> {
  const now = Date.now();
  const plan = attemptPlan(failureFacts(err), job, deps.limits, now);
  if (plan.next === 'pause') {
    if (plan.pauses === 'engine') await deps.pause(plan.pauseMs);
    else if (desk?.rate) {
      const wait = { ms: plan.atMs - now, paused: !plan.budgetFull };
      plan.atMs = await laterFor(desk, job.input.to.length, wait, lineMemberOf(job, deps.queueName));
    }
    // No attempt spent: the job waits until the pause ends, as if it had not started.
    await settle(
      job,
      { ...job, state: 'waiting', attempts: job.attempts - 1, runAt: plan.atMs },
      deps,
      claimed,
    );
    deps.emit('rateLimited', { jobId: job.jobId, retryAfterMs: plan.pauseMs });
    return plan.pauses === 'engine'
      ? { kind: 'later', atMs: plan.atMs, pauseMs: plan.pauseMs }
      : { kind: 'later', atMs: plan.atMs };
  }
  const final = plan.next === 'fail';
  const kept =
    final && plan.asUncertain
      ? new EmailSendUncertainError({
          idempotencyKey: job.idempotencyKey,
          attempts: job.attempts,
          cause: err,
        })
      : err instanceof Error
        ? err
        : new Error(String(err));
  const base = { ...job, uncertain: plan.uncertain, error: storeJobError(kept) };
  if (final) {
    const record: EmailJobRecord = { ...base, state: 'failed', finishedAt: now };
    await settle(job, record, deps, claimed);
    return failedVerdict(record, deps);
  }
  await settle(job, { ...base, state: 'waiting', runAt: plan.atMs }, deps, claimed);
  deps.emit('failed', { jobId: job.jobId, idempotencyKey: job.idempotencyKey, error: kept, final: false });
  return { kind: 'retry', atMs: plan.atMs, error: kept };
}

/**
 * Records how this attempt ended. The record changes under an active attempt only when an engine gave the
 * job to another worker meanwhile (this one was taken for dead): that attempt owns the job now. `held`: the
 * record as the claim left it, with its token.
 */
async function settle<O, Tx>(
  claimed: EmailJobRecord,
  next: EmailJobRecord,
  deps: JobRunDeps<O, Tx>,
  held?: HeldJob,
): Promise<void> {
  // Unchanged since the claim: one compare-and-set. Otherwise (or refused), read it and decide as below.
  if (held && (await deps.backend.replace(held, next))) return;
  const now = await deps.backend.read(next.jobId);
  if (!now || now.record.state !== 'active' || now.record.attempts !== claimed.attempts) return;
  await deps.backend.replace(now, next);
}

/** What a failed attempt means, as the job span reports it. */
function spanOutcomeOf(err: unknown): string {
  const facts = failureFacts(err);
  if (facts.rateLimited) return 'rate-limited';
  return mayHaveCreated(facts) ? 'uncertain' : 'failed';
}

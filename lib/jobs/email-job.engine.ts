import { runInEmailJobSpan, runInEmailTraceContext } from '../telemetry/trace-context.helpers.js';
import { EmailError } from '../errors/email.error.js';
import { EmailSendUncertainError } from '../errors/email-send-uncertain.error.js';
import { failureFacts } from '../errors/failure-facts.helpers.js';
import type { AccountDesk } from '../delivery/account-desk.store.js';
import type { FindSentOptions } from '../interfaces/call-options.interface.js';
import type { BatchEmailItem, EmailInput } from '../interfaces/email-input.interface.js';
import type { EmailJobEvents, EmailJobRecord } from '../interfaces/email-job.interface.js';
import type { EmailLog, FindSentResult } from '../interfaces/email-records.interface.js';
import { attemptPlan, claimPlan, mayHaveCreated, moveJob, type JobLimits } from '../policy/job.policy.js';
import type { DeliveredJob, JobVerdict } from './email-job.interface.js';
import { rebuildJobError, storeJobError } from './job-error.parser.js';
import { settledBy } from '../time/clock.helpers.js';

/** What the routine needs besides the job. */
export interface JobRunDeps {
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
  /** Pauses every job of the engine after a 429 (a job without account), before the job is given back. */
  pause: (ms: number) => Promise<void>;
  /** The engine's queue name, for the job span and the account's line. */
  queueName: string;
  emit: <E extends keyof EmailJobEvents>(event: E, payload: Parameters<EmailJobEvents[E]>[0]) => void;
}

/**
 * One delivery of a job by its engine (BullMQ for `./queue`, pg-boss for `./outbox`), start to end. The engine
 * counts the job `active` once it hands it over (that is the claim: one worker at a time, and a cancel that
 * comes later is too late); the table's `claimPlan` says whether an attempt may start, the job's input is sent
 * with the job's key, and the verdict says what the engine writes, in one step. Every attempt sends the same
 * bytes with the same key, so an attempt that follows one that may have been accepted gets the service's replay
 * of its own record, never another job's look-alike.
 */
export async function runEmailJob(job: DeliveredJob, deps: JobRunDeps): Promise<JobVerdict> {
  const { record, interrupted } = job;
  if (record.state !== 'waiting') return { kind: 'dropped' }; // a cancel came first
  const account = await accountOf(record, interrupted, deps);
  if (account?.laterMs !== undefined) return { kind: 'later', atMs: account.laterMs };
  const plan = claimPlan(record, interrupted, Date.now(), deps.limits);
  if (plan.next === 'drop') return { kind: 'dropped' };
  if (plan.next === 'later') return { kind: 'later', atMs: plan.atMs };
  if (plan.next === 'end') return failedVerdict(ended(plan.record, plan.asUncertain), deps);
  if (account?.failure !== undefined) return afterFailure(plan.record, account.failure, deps);
  if (account?.rotated) return lastResort(plan.record, account.desk!, deps);
  let claimed = plan.record;
  if (account?.keyTag !== undefined && claimed.keyTag !== account.keyTag) {
    // The first send under this key (it was rotated since the job was written): its tag is kept before it, so
    // that an attempt after this one can tell whether the key changed under an attempt that may be accepted.
    claimed = { ...claimed, keyTag: account.keyTag };
    await job.keep(claimed);
  }
  return attempt(claimed, deps, account?.desk);
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
async function accountOf(
  job: EmailJobRecord,
  interrupted: number,
  deps: JobRunDeps,
): Promise<JobAccount | undefined> {
  if (job.account === undefined) return undefined;
  let desk: AccountDesk;
  try {
    desk = await deps.desk(job.account);
  } catch (failure) {
    return { failure };
  }
  const recipients = job.input.to.length;
  // not due: the claim gives it back anyway; cut off mid-attempt: it resends at once (its `take` decides)
  const due = interrupted === 0 && job.runAt <= Date.now();
  const room = due && desk.rate !== null ? await desk.rate.roomIn(recipients) : undefined;
  const member = lineMemberOf(job, deps.queueName);
  if (room !== undefined && room.ms > 0) return { laterMs: await laterFor(desk, recipients, room, member) };
  if (room !== undefined && desk.rate?.paced) void desk.rate.release(member); // it leaves the line
  const keyTag = desk.keyTag(job.jobId);
  const mayBeAccepted = job.uncertain || interrupted > 0;
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

/**
 * A job of an account that was cancelled or moved gives back its slot in the account's line, if it held one.
 * The call waits for it up to `withinMs`, so that a job written right after the call finds the line without it;
 * it never fails the call (a slot left behind goes by itself once its time is over).
 */
export async function leaveLine(
  record: EmailJobRecord,
  deps: Pick<JobRunDeps, 'desk' | 'queueName'>,
  withinMs: number,
): Promise<void> {
  const { account } = record;
  if (account === undefined) return;
  const left = (async () => {
    const desk = await deps.desk(account);
    if (desk.rate?.paced) await desk.rate.release(lineMemberOf(record, deps.queueName));
  })();
  await settledBy(left, Date.now() + withinMs);
}

/** A job's name in its account's line (the engine's queue and the job id: one account serves both engines). */
export function lineMemberOf(job: Pick<EmailJobRecord, 'jobId'>, queueName: string): string {
  return `${queueName} ${job.jobId}`;
}

/**
 * An attempt after one that may have been accepted under another key of the account: the service's replay
 * of the Idempotency-Key may not hold across keys (the contract does not say), so nothing is sent again.
 * The message log (read with the account's key) is the last resort: a record proven to be this job's own
 * is adopted, else the job ends `EmailSendUncertainError` with its key. Never a second email.
 */
async function lastResort(job: EmailJobRecord, desk: AccountDesk, deps: JobRunDeps): Promise<JobVerdict> {
  const { idempotencyKey } = job;
  let found: FindSentResult | undefined;
  let cause: unknown;
  try {
    const since = new Date(job.createdAt);
    found = await deps.findSent(job.input, { account: desk.accountId, since, maxRetries: 1 });
  } catch (err) {
    cause = err;
  }
  if (found?.record) return sent(job, found.record, deps);
  const reason = new EmailError(
    `the account's API key changed after an attempt that may have been accepted under the old key, and the message log ${
      cause === undefined
        ? `does not prove one of its records is this job's (${found?.certainty})`
        : 'could not be read'
    }: not sent again, so as never to send it twice`,
    { cause },
  );
  const error = new EmailSendUncertainError({ idempotencyKey, attempts: job.attempts, cause: reason });
  return failedVerdict(
    moveJob(job, 'failed', 'worker', { error: storeJobError(error), finishedAt: Date.now() }),
    deps,
  );
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
  return moveJob(record, 'failed', 'worker', { error: storeJobError(error), finishedAt: Date.now() });
}

/** A job that ended without an email (or uncertain): reported as final, and the engine fails its job. */
function failedVerdict(record: EmailJobRecord, deps: JobRunDeps): JobVerdict {
  const error = record.error
    ? rebuildJobError(record.error)
    : new EmailError(`Email job ${record.jobId} failed`);
  deps.emit('failed', { jobId: record.jobId, idempotencyKey: record.idempotencyKey, error, final: true });
  return { kind: 'failed', record, error };
}

/** Sends once; `job` is the job as this attempt took it (`active`, the attempt counted). */
async function attempt(job: EmailJobRecord, deps: JobRunDeps, desk?: AccountDesk): Promise<JobVerdict> {
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
    return afterFailure(job, err, deps, desk);
  }
  return sent(job, log, deps);
}

/** The job's email exists and `log` is its own record: the engine completes the job with it. */
function sent(job: EmailJobRecord, log: EmailLog, deps: JobRunDeps): JobVerdict {
  moveJob(job, 'sent', 'worker'); // the table has this move: the engine writes it as its job's completion
  deps.emit('sent', { jobId: job.jobId, idempotencyKey: job.idempotencyKey, record: log });
  return { kind: 'sent', log };
}

async function afterFailure(
  job: EmailJobRecord,
  err: unknown,
  deps: JobRunDeps,
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
    // No attempt spent: the job is given back as it was written, to start when the pause ends.
    moveJob(job, 'waiting', 'worker');
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
  const changes = { uncertain: plan.uncertain, error: storeJobError(kept) };
  if (final) return failedVerdict(moveJob(job, 'failed', 'worker', { ...changes, finishedAt: now }), deps);
  const record = moveJob(job, 'waiting', 'worker', { ...changes, runAt: plan.atMs });
  deps.emit('failed', { jobId: job.jobId, idempotencyKey: job.idempotencyKey, error: kept, final: false });
  return { kind: 'retry', atMs: plan.atMs, record, error: kept };
}

/** What a failed attempt means, as the job span reports it. */
function spanOutcomeOf(err: unknown): string {
  const facts = failureFacts(err);
  if (facts.rateLimited) return 'rate-limited';
  return mayHaveCreated(facts) ? 'uncertain' : 'failed';
}

import { EmailValidationError, type EmailValidationIssue } from '../errors/email-validation.error.js';
import type { EmailInput } from '../interfaces/email-input.interface.js';
import type { EmailJobRecord } from '../interfaces/email-job.interface.js';
import { storableIdProblem, withDefaultFrom } from '../validation/call-options.rules.js';
import { snapshotInput } from '../validation/input-snapshot.helpers.js';
import { validateEmailInput } from '../validation/send.rules.js';
import { moveJob } from '../policy/job.policy.js';
import { fingerprintOf, randomJobId } from './job-identity.helpers.js';

/** The longest job id, in UTF-16 code units. */
export const JOB_ID_MAX_LENGTH = 256;

/** The one rule for a job id on both engines; undefined when `jobId` is fine. */
export function jobIdProblem(jobId: unknown): string | undefined {
  return storableIdProblem(jobId, JOB_ID_MAX_LENGTH);
}

/** The options every engine's `send` takes, checked once here. */
export interface JobSendOptions {
  jobId?: string;
  delayMs?: number;
  /** The account the job sends for (the module's `accounts` resolver finds its key at each attempt). */
  account?: string;
}

/** What an engine checks of its own options (`priority` on the queue), adding issues at `at`. */
export type EngineOptionRules<O> = (options: O, at: string, issues: EmailValidationIssue[]) => void;

/** A job ready to be written: its record and the engine's own options. */
export interface NewEmailJob<O> {
  record: EmailJobRecord;
  options: O;
}

/**
 * Checks a call's items exactly as `EmailService.send` will send them (one snapshot of each input, its
 * `defaultFrom`, every rule; the job id; the delay; the engine's own options) and builds their records.
 * @throws EmailValidationError naming every problem (paths `[i].…` when there are several items); nothing
 * is written then.
 */
export function checkJobs<O extends JobSendOptions>(
  items: ReadonlyArray<{ input: EmailInput; options?: O }>,
  ctx: {
    /** The sender of an input without `from`: the account's, else the module's. */
    defaultFrom: (account: string | undefined) => string | undefined;
    keyFor: (jobId: string, account: string | undefined) => string;
    engineRules: EngineOptionRules<O>;
    trace?: EmailJobRecord['trace'];
    now: number;
  },
): Array<NewEmailJob<O>> {
  const issues: EmailValidationIssue[] = [];
  if (!Array.isArray(items)) throw new EmailValidationError([{ path: '', message: 'must be an array' }]);
  const jobs = items.map(({ input, options = {} as O }, i) => {
    const at = items.length > 1 ? `[${i}].` : '';
    // One plain snapshot, validated and then stored: what is checked is what the worker sends.
    const snap = snapshotInput(input);
    const { account } = options;
    const prepared = withDefaultFrom(snap.value, ctx.defaultFrom(account)) as EmailInput;
    const found = snap.issues.length > 0 ? snap.issues : validateEmailInput(prepared);
    for (const issue of found) issues.push({ ...issue, path: `${at}${issue.path}` });
    // The job id is fixed before anything is written: a retry with it can never be a second email.
    const jobId = options.jobId ?? randomJobId();
    const idProblem = jobIdProblem(jobId);
    if (idProblem) issues.push({ path: `${at}jobId`, message: idProblem });
    const { delayMs } = options;
    if (delayMs !== undefined && !(Number.isFinite(delayMs) && delayMs >= 0))
      issues.push({ path: `${at}delayMs`, message: 'must be a number of milliseconds >= 0' });
    ctx.engineRules(options, at, issues);
    // a new job: the table's first move
    const record: EmailJobRecord = moveJob(
      {
        jobId,
        idempotencyKey: idProblem ? '' : ctx.keyFor(jobId, account),
        // the account is part of what the job is: the same id for another account is another job
        fingerprint: fingerprintOf(account === undefined ? prepared : { account, input: prepared }),
        input: prepared,
        ...(account !== undefined ? { account } : {}),
        ...(ctx.trace ? { trace: ctx.trace } : {}),
        state: null,
        runAt: ctx.now + (delayMs ?? 0),
        attempts: 0,
        interruptions: 0,
        uncertain: false,
        createdAt: ctx.now,
      },
      'waiting',
      'write',
    );
    return { record, options };
  });
  if (issues.length > 0) throw new EmailValidationError(issues);
  return jobs;
}

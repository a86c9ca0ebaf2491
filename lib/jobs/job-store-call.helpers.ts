import { EmailError } from '../errors/email.error.js';
import { EmailValidationError } from '../errors/email-validation.error.js';
import type { EmailJobRecord, EmailJobState } from '../interfaces/email-job.interface.js';
import { raceDeadline } from '../time/clock.helpers.js';
import type { EmailJobBackend, HeldJob } from './email-job.interface.js';
import { jobIdProblem } from './email-job.rules.js';
import { stateOf } from './job-record.helpers.js';

// Every call of the job layer to its engine's store, bounded and with one kind of failure.

/** What a store call does, for its error, and whether a write that timed out may still land. */
export interface StoreCall {
  what: string;
  jobIds?: readonly string[];
  mayLand?: boolean;
}

/**
 * `work` within `ms` (`commandTimeoutMs`) and a little grace, so that an engine's own, more precise answer at
 * `ms` (nothing was written) comes first; past it, the engine's unavailable error. A failure of the store itself
 * (a refused connection, a statement that failed) is the engine's unavailable error too, with the store's error
 * as its cause: every failure of a job call is an `EmailError`.
 */
export function boundCall<T>(
  backend: Pick<EmailJobBackend<unknown, unknown>, 'unavailable'>,
  work: Promise<T>,
  call: StoreCall,
  ms: number,
): Promise<T> {
  const promise = work.catch((err: unknown) => {
    if (err instanceof EmailError) throw err;
    const reason = `${call.what}: ${(err as Error)?.message ?? String(err)}`;
    throw backend.unavailable(reason, err, call.jobIds, false);
  });
  promise.catch(() => undefined); // a late failure after the timeout is nobody's to handle
  return raceDeadline(promise, ms + Math.min(1000, Math.max(100, ms / 10)), () => {
    const reason = `${call.what} took longer than ${ms} ms`;
    throw backend.unavailable(reason, undefined, call.jobIds, call.mayLand);
  });
}

/**
 * Applies `next` to a waiting job if `allowed` (the table's `mayCancel`, `mayReschedule`): read, decide, then the
 * engine's compare-and-set, again from the read while something changed the job meanwhile. The new record, or
 * the state that stopped it (null: an unknown job). In `tx` where the engine has transactions.
 */
export async function changeJob<O, Tx>(
  backend: EmailJobBackend<O, Tx>,
  change: {
    jobId: string;
    tx: Tx | undefined;
    allowed: (r: EmailJobRecord) => boolean;
    next: (r: EmailJobRecord) => EmailJobRecord;
    ms: number;
  },
): Promise<EmailJobRecord | EmailJobState | null> {
  const { jobId, tx, allowed, next, ms } = change;
  const problem = jobIdProblem(jobId);
  if (problem) throw new EmailValidationError([{ path: 'jobId', message: problem }]);
  for (;;) {
    const held: HeldJob | null = await boundCall(
      backend,
      backend.read(jobId, tx),
      { what: `reading ${jobId}` },
      ms,
    );
    if (!held) return null;
    if (!allowed(held.record)) return stateOf(held.record);
    const changed = next(held.record);
    const replaced = await boundCall(
      backend,
      backend.replace(held, changed, tx),
      { what: `changing ${jobId}` },
      ms,
    );
    if (replaced) return changed;
  }
}

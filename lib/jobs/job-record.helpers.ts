import type { EmailJobRecord, EmailJobState } from '../interfaces/email-job.interface.js';
import type { EngineFacts, StoredEmailJob } from './email-job.interface.js';

// A job's record is kept in its engine's own job: its data (`StoredEmailJob`), and what the engine says beside it
// (its state, when it is due, its output, how often it took the job back from a worker). These two functions go
// from one to the other, the same for both engines.

/** What an engine keeps as a job's data, for `record` as it stands now (`takenBack`: the engine's count now). */
export function storedOf(record: EmailJobRecord, takenBack: number): StoredEmailJob {
  const { record: _log, finishedAt: _end, ...kept } = record;
  return { ...kept, takenBack };
}

/**
 * A job's record from its data and its engine's facts. The times the engine took the job back since its data
 * was written are attempts cut off (each may have reached the service): counted here as they will be at the
 * next delivery. An active or completed job's attempt under way (or done) is counted too: a delivery writes
 * nothing until its outcome.
 */
export function recordOf(stored: StoredEmailJob, facts: EngineFacts): EmailJobRecord {
  const { takenBack, ...kept } = stored;
  const cutOff = Math.max(0, facts.takenBack - takenBack);
  const record: EmailJobRecord = {
    ...kept,
    attempts: kept.attempts + cutOff,
    interruptions: kept.interruptions + cutOff,
    uncertain: kept.uncertain || cutOff > 0,
  };
  const ended = facts.finishedAt !== undefined ? { finishedAt: facts.finishedAt } : {};
  switch (facts.state) {
    case 'completed':
      return { ...record, state: 'sent', attempts: record.attempts + 1, record: facts.output, ...ended };
    case 'cancelled':
      return { ...record, state: 'cancelled', ...ended };
    case 'failed':
      // BullMQ ends a cancelled job failed; an attempt's failure is written to the data first
      return { ...record, state: kept.state === 'cancelled' ? 'cancelled' : 'failed', ...ended };
    case 'active':
      if (kept.state !== 'waiting') return record; // a cancelled job a worker took to drop
      return { ...record, state: 'active', attempts: record.attempts + 1 };
    case 'waiting':
      // due when the engine says (a slot in an account's line, a backoff), never before the record's own time
      return { ...record, runAt: Math.max(record.runAt, facts.dueAt ?? record.runAt) };
  }
}

/** A delivered job's record as written, and how many attempts were cut off since (see `DeliveredJob`). */
export function deliveredOf(
  stored: StoredEmailJob,
  takenBack: number,
): { record: EmailJobRecord; interrupted: number } {
  const { takenBack: seen, ...record } = stored;
  return { record, interrupted: Math.max(0, takenBack - seen) };
}

/** A job's own state as users see it: a waiting job whose start lies ahead is `delayed`. */
export function stateOf(record: EmailJobRecord, now = Date.now()): EmailJobState {
  return record.state === 'waiting' && record.runAt > now ? 'delayed' : record.state;
}

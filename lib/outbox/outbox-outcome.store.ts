import type { JobVerdict } from '../jobs/email-job.interface.js';
import { storedOf } from '../jobs/job-record.helpers.js';
import { failedOutputOf, jsonbOf, type OutboxSql } from './outbox-sql.helpers.js';
import type { OutboxStatements } from './outbox-statement.store.js';

/**
 * How a taken job ends in pg-boss's terms: `sent` (completed, the message record its output), `failed`,
 * `cancelled`, `later` (given back to start at `startMs`, not counted as taken) or `cut` (given back, counted by
 * pg-boss's next fetch as a take cut off mid-attempt). `data`: the job's record to write with it, as jsonb text.
 */
export interface OutboxOutcome {
  id: string;
  kind: 'sent' | 'failed' | 'cancelled' | 'later' | 'cut';
  startMs?: number;
  /** JSON text (see `jsonbOf`), or undefined to keep pg-boss's. */
  output?: string;
  /** JSON text (see `jsonbOf`), or undefined to keep the job's data as it is. */
  data?: string;
}

/**
 * A verdict of the job layer in pg-boss's terms, for the job `id` that pg-boss had taken back `takenBack` times:
 * the message record as the output of a sent job, the record's data (as jsonb text) where it changed.
 */
export function outcomeOf(id: string, takenBack: number, verdict: JobVerdict): OutboxOutcome {
  switch (verdict.kind) {
    case 'sent':
      return { id, kind: 'sent', output: jsonbOf(verdict.log) };
    case 'dropped':
      return { id, kind: 'cancelled' };
    case 'failed': {
      const output = JSON.stringify(failedOutputOf(verdict.error, verdict.record.jobId));
      return { id, kind: 'failed', output, data: jsonbOf(storedOf(verdict.record, takenBack)) };
    }
    case 'later':
      return { id, kind: 'later', startMs: verdict.atMs };
    case 'retry':
      return { id, kind: 'later', startMs: verdict.atMs, data: jsonbOf(storedOf(verdict.record, takenBack)) };
  }
}

interface Pending {
  outcome: OutboxOutcome;
  done: (err?: unknown) => void;
}

/**
 * The outcomes of the worker's taken jobs, written in batches: the outcomes that arrive while one statement is
 * under way go together in the next (`outboxSql.outcomes`: one `UPDATE` for all, each row with its own state,
 * output and data), and none waits when nothing else is being written. Each caller learns whether its write
 * went through (a failed statement fails each of its outcomes: the caller tries again).
 */
export class OutboxOutcomes {
  private pending: Pending[] = [];
  private writing?: Promise<void>;

  constructor(
    private readonly statements: OutboxStatements,
    /** The statements of the schema (read at boot). */
    private readonly sql: () => OutboxSql,
    private readonly queue: string,
    /** How long a job given back is kept past its new start, and a sent one (ms). */
    private readonly keep: { waitingMs: number; sentMs: number },
  ) {}

  write(outcome: OutboxOutcome): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ outcome, done: (err) => (err === undefined ? resolve() : reject(err)) });
      this.writing ??= this.flush();
    });
  }

  /** Resolves once every outcome given so far is written (or failed). */
  async settled(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async flush(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending;
      this.pending = [];
      const o = batch.map((p) => p.outcome);
      const values = [
        this.queue,
        o.map((x) => x.id),
        o.map((x) => x.kind),
        o.map((x) => x.startMs ?? null),
        `[${o.map((x) => x.output ?? 'null').join(',')}]`,
        `[${o.map((x) => x.data ?? 'null').join(',')}]`,
        this.keep.waitingMs,
        this.keep.sentMs,
      ];
      let failed: unknown;
      try {
        await this.statements.query(this.sql().outcomes, values);
      } catch (err) {
        failed = err ?? new Error('the outcomes were not written');
      }
      for (const p of batch) p.done(failed);
    }
    this.writing = undefined;
  }
}

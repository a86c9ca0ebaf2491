import type { EmailJobRecord } from '../interfaces/email-job.interface.js';
import type { HeldJob } from '../jobs/email-job.interface.js';
import type { PendingReplace } from './outbox-engine.interface.js';
import { engineEndOf, type OutboxSql } from './outbox-sql.helpers.js';
import type { OutboxStatements } from './outbox-statement.store.js';

/**
 * The worker's compare-and-sets (claims and outcomes, and a cancel without `tx`), outside a transaction: the
 * replaces that arrive while one statement is under way go together in the next, one `UPDATE` for all, each
 * row still compared on its own version and skipped when another transaction holds it, each caller told
 * whether its own row changed. Claims and outcomes share the statements: a fetched batch's claims go with the
 * outcomes that wait beside them (one statement where there were two, measured: a claim waits at most for the
 * one statement under way, while the jobs the worker holds keep its send slots busy). Never two of one job in
 * one statement; a statement that fails is tried again row by row. (A claim and a cancel of one job, one
 * after the other, are still one change: the second sees its version moved, and says false.)
 */
export class OutboxReplaces {
  private pending: PendingReplace[] = [];
  private flushing = false;
  /** pg-boss ids of jobs ended in pg-boss by the statement that wrote their final record (see `takeEnded`). */
  private readonly endedWithRecord = new Set<string>();

  constructor(
    private readonly statements: OutboxStatements,
    private readonly sql: OutboxSql,
    private readonly queueName: string,
    /** Until when a record is kept (epoch ms). */
    private readonly keepUntil: (record: EmailJobRecord) => number,
    /** One compare-and-set alone, for a statement that failed. */
    private readonly replaceOne: (held: HeldJob, next: EmailJobRecord) => Promise<boolean>,
    /** pg-boss's id of a record's job (the one this worker took, where it took one). */
    private readonly engineIdOf: (record: EmailJobRecord) => string,
  ) {}

  replace(held: HeldJob, next: EmailJobRecord): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      this.pending.push({ held, next, resolve, reject });
      if (this.flushing) return;
      this.flushing = true;
      // After the current turn of the event loop: the claims of a whole fetched batch, made in one turn,
      // go in one statement.
      setImmediate(() => void this.flush());
    });
  }

  /**
   * True (once) when the statement that wrote this job's final record (sent, failed) also ended its pg-boss
   * job: the worker then has nothing left to write for it.
   */
  takeEnded(engineId: string): boolean {
    return this.endedWithRecord.delete(engineId);
  }

  private async flush(): Promise<void> {
    try {
      while (this.pending.length > 0) {
        const batch: PendingReplace[] = [];
        const later: PendingReplace[] = [];
        const ids = new Set<string>();
        for (const r of this.pending) {
          if (ids.has(r.next.jobId)) later.push(r);
          else {
            ids.add(r.next.jobId);
            batch.push(r);
          }
        }
        this.pending = later;
        try {
          await this.write(batch);
        } catch {
          for (const r of batch) await this.replaceOne(r.held, r.next).then(r.resolve, r.reject);
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  private async write(batch: PendingReplace[]): Promise<void> {
    // A final record (sent, failed) ends its pg-boss job in the same statement, as `finishMany` would: one
    // write per finished job instead of two, and the two can never disagree.
    const ends = batch.map((r) => engineEndOf(r.held.record, r.next));
    const engineIds = ends.map((e, i) => (e ? this.engineIdOf(batch[i]!.next) : null));
    const values: unknown[] = [
      this.queueName,
      batch.map((r) => r.next.jobId),
      batch.map((r) => r.held.token),
      JSON.stringify(batch.map((r) => r.next)),
      batch.map((r) => this.keepUntil(r.next)),
    ];
    const ending = ends.some((e) => e !== null);
    if (ending)
      values.push(
        engineIds,
        ends.map((e) => e?.state ?? null),
        ends.map((e) => (e ? JSON.stringify(e.output) : null)),
      );
    const answer = await this.statements.query(
      ending ? this.sql.replaceManyEnding : this.sql.replaceMany,
      values,
    );
    const changed = new Set(answer.rows.map((row: Record<string, unknown>) => String(row.job_id)));
    batch.forEach((r, i) => {
      const engineId = engineIds[i];
      if (engineId && changed.has(r.next.jobId)) this.endedWithRecord.add(engineId);
      r.resolve(changed.has(r.next.jobId));
    });
  }
}

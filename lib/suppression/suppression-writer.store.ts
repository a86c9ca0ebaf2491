import { withTimeout } from '../time/clock.helpers.js';
import type { SuppressionMirror } from './suppression-mirror.store.js';
import type { SuppressionOp, SuppressionStore } from './suppression-store.interface.js';
import { SUPPRESSION_DEFAULTS } from './suppression.constants.js';

/** First and longest wait before the store is tried again with the writes it did not take. */
const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 5_000;
/** Most writes sent again at once. */
const FLUSH_BATCH = 500;

/**
 * The writes of one gate (the app's `add` and `remove`, what the module learned): each batch to the store,
 * then applied to the local copy. What the store does not take is not lost: what suppresses is refused here at
 * once (held in the copy through its loads) and written again with backoff, the latest write of a field winning,
 * at most `maxPending` kept.
 */
export class SuppressionWriter {
  private readonly pending = new Map<string, SuppressionOp>();
  private retryMs = RETRY_FIRST_MS;
  private retryTimer?: NodeJS.Timeout;

  constructor(
    private readonly store: SuppressionStore,
    private readonly mirror: SuppressionMirror,
    private readonly timeoutMs: number,
    private readonly warn: (line: string) => void,
  ) {}

  /** Writes a batch and applies it here; rejects (the batch kept for later) when the store does not take it. */
  async write(ops: readonly SuppressionOp[]): Promise<readonly boolean[]> {
    try {
      const applied = await this.send(ops);
      if (this.pending.size > 0) void this.flush(); // the store answers again: what waited goes now
      return applied;
    } catch (err) {
      const suppressing = ops.filter((op) => op.entry.code !== 0);
      this.mirror.holdLocal(suppressing);
      for (const op of suppressing) this.pending.set(op.field, op);
      while (this.pending.size > SUPPRESSION_DEFAULTS.maxPending)
        this.pending.delete(this.pending.keys().next().value as string);
      this.scheduleFlush();
      throw err;
    }
  }

  /** Writes what the store did not take earlier (also when the copy is current again). */
  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const ops = [...this.pending.values()].slice(0, FLUSH_BATCH);
    try {
      await this.send(ops);
      for (const op of ops) if (this.pending.get(op.field) === op) this.pending.delete(op.field);
      this.mirror.releaseLocal(ops.map((op) => op.field));
      this.retryMs = RETRY_FIRST_MS;
      this.warn(
        `suppression list wrote ${ops.length} entr${ops.length === 1 ? 'y' : 'ies'} its store had not taken`,
      );
    } catch {
      // tried again below
    }
    this.scheduleFlush();
  }

  /** Entries the store has not taken yet. */
  get size(): number {
    return this.pending.size;
  }

  close(): void {
    clearTimeout(this.retryTimer);
  }

  private async send(ops: readonly SuppressionOp[]): Promise<readonly boolean[]> {
    const write = withTimeout(
      this.store.write(ops, Date.now()),
      this.timeoutMs,
      'the suppression store writing',
    );
    const { version, applied } = await write;
    this.mirror.applyOwn(
      version,
      ops.filter((_, i) => applied[i]),
    );
    return applied;
  }

  private scheduleFlush(): void {
    if (this.retryTimer !== undefined || this.pending.size === 0) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.flush();
    }, this.retryMs);
    this.retryTimer.unref?.();
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
  }
}

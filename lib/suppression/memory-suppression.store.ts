import { decodeEntry, encodeEntry, mayLearnOver } from './suppression.constants.js';
import type {
  StoredPage,
  SuppressionChange,
  SuppressionOp,
  SuppressionStore,
  SuppressionWrite,
} from './suppression-store.interface.js';

/**
 * The list of one process (no `redis`, no `postgres`): a map of fields to entries. It has no other process
 * to tell, so its changes reach the local copy only through the writer (which applies what it wrote).
 */
export class MemorySuppressionStore implements SuppressionStore {
  readonly kind = 'memory';
  readonly connected = true;
  private readonly entries = new Map<string, string>();
  private version = 0;

  open(): Promise<void> {
    return Promise.resolve();
  }

  write(ops: readonly SuppressionOp[], now: number): Promise<SuppressionWrite> {
    const applied = ops.map((op) => {
      if (
        op.learnedAt !== undefined &&
        !mayLearnOver(decodeEntry(this.entries.get(op.field)), op.learnedAt, now)
      )
        return false;
      this.entries.set(op.field, encodeEntry(op.entry));
      return true;
    });
    return Promise.resolve({ version: ++this.version, applied });
  }

  read(fields: readonly string[]): Promise<Array<string | null>> {
    return Promise.resolve(fields.map((f) => this.entries.get(f) ?? null));
  }

  page(scope: string, after: string | undefined, limit: number): Promise<StoredPage> {
    const from = `${scope}\n${after ?? ''}`;
    const fields = [...this.entries.keys()]
      .filter((f) => f.startsWith(`${scope}\n`) && (after === undefined || f > from))
      .sort();
    const taken = fields.slice(0, limit);
    const values = taken.map((f) => this.entries.get(f) as string);
    return Promise.resolve({ fields: taken, values, more: fields.length > limit });
  }

  snapshot(each: (field: string, value: string) => void): Promise<number> {
    for (const [field, value] of this.entries) each(field, value);
    return Promise.resolve(this.version);
  }

  changesSince(): Promise<SuppressionChange[] | null> {
    return Promise.resolve([]);
  }

  watch(): Promise<boolean> {
    return Promise.resolve(true);
  }

  ping(): Promise<void> {
    return Promise.resolve();
  }

  claim(): Promise<boolean> {
    return Promise.resolve(true);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

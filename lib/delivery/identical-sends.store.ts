import type { EmailDetail } from '../interfaces/email-records.interface.js';
import { Linked, LinkedList } from '../lists/linked-list.store.js';

/**
 * One call of this instance that may still claim a record (see `IdenticalSends`): a send, or one item
 * of a batch in flight. It carries its own place in the list of open sends (`Linked`): a `Set` of them
 * rebuilt its table as sends came and went, and each table outlived its entries in the old generation
 * (40 bytes promoted per send); links cost nothing per send.
 */
export abstract class OpenSend extends Linked<OpenSend> {
  /** Whether it waits for, or runs, a look-up (then it cannot claim a record any other way meanwhile). */
  reconciling = false;

  /**
   * What a look-up matches the send on (sender, recipients, subject), as one string. Asked only while
   * some look-up runs or waits, so most sends never work it out; it must return the same text each time.
   */
  abstract signature(): string;

  /** Whether `detail` carries this send's own content (the record may then be its message). */
  abstract carries(detail: EmailDetail): boolean;
}

/**
 * Sends of this instance that are still open. Sends with the same signature are identical to a
 * look-up. A look-up for one of them may take a record only when no other open identical send can
 * still get a record by an answer (an attempt in flight, or a retry to come with its key, whose replay
 * returns its record): it waits until every other identical send is itself waiting to look up, and
 * look-ups of one signature run one at a time. A send that opens while a look-up of its signature
 * runs waits for that look-up before its first attempt, so the look-up cannot see (and take) its
 * record. All waits end at the caller's deadline or signal. While no look-up runs or waits, opening
 * and closing a send is linking and unlinking it: nothing is computed, allocated or awaited.
 */
export class IdenticalSends {
  /** The open sends, oldest first. */
  private readonly open = new LinkedList<OpenSend>();
  /** Signatures whose look-up is running (at most one each). */
  private readonly running = new Set<string>();
  private readonly waiters = new Set<() => void>();
  /** Open sends held back by `enter` until a look-up ends: they have made no attempt yet. */
  private readonly entering = new Set<OpenSend>();

  /**
   * Opens `send`. Returns undefined when it may make its first attempt now, or a promise that
   * settles when it may (a look-up of its signature ended, or `until` did: the attempt then just goes).
   */
  enter(send: OpenSend, until: Until): Promise<boolean> | undefined {
    if (!send.listed) {
      this.open.append(send); // opening an open send again changes nothing
      this.opened++;
    }
    if (this.running.size === 0) return undefined;
    const signature = send.signature();
    if (!this.running.has(signature)) return undefined;
    this.entering.add(send);
    return this.waitFor(() => !this.running.has(signature), until).finally(() => this.entering.delete(send));
  }

  /** How many sends were ever opened: an account's state that saw none open for a while may go. */
  opened = 0;

  /** Whether nothing is under way: no send open, no look-up running (an account's state may then go). */
  get idle(): boolean {
    return this.open.first === null && this.running.size === 0;
  }

  /** Closes a send (it has its result or its error). */
  leave(send: OpenSend): void {
    this.open.remove(send);
    this.notify();
  }

  /**
   * Runs `lookup` for `send` once no other open identical send can still claim a record by an
   * answer, and no other look-up of its signature runs. Resolves to undefined, without running it,
   * when `until` ends first.
   */
  async exclusive<T>(send: OpenSend, until: Until, lookup: () => Promise<T>): Promise<T | undefined> {
    const signature = send.signature();
    send.reconciling = true;
    this.notify();
    try {
      const ready = (): boolean => !this.running.has(signature) && this.othersReconciling(send, signature);
      // Checked again once this frame runs: two waiters woken together must not both start.
      do {
        if (!(await this.waitFor(ready, until))) return undefined;
      } while (!ready());
      this.running.add(signature);
      try {
        return await lookup();
      } finally {
        this.running.delete(signature);
      }
    } finally {
      send.reconciling = false;
      this.notify();
    }
  }

  /**
   * The open sends with `signature`, other than `except`, that may still get a record by their own
   * answer (an attempt in flight, a retry to come, a batch not yet answered): a record carrying their
   * content may be theirs, so no look-up may take it. A send still held back by `enter` has made no
   * attempt, so no record is its yet. Worked out only when a look-up decides.
   */
  inFlight(signature: string, except?: OpenSend): OpenSend[] {
    const found: OpenSend[] = [];
    for (let other = this.open.first; other !== null; other = other.next) {
      if (other === except || other.reconciling || this.entering.has(other)) continue;
      if (other.signature() === signature) found.push(other);
    }
    return found;
  }

  /** Whether every other open send with `signature` is waiting to look up (or running its look-up). */
  private othersReconciling(send: OpenSend, signature: string): boolean {
    for (let other = this.open.first; other !== null; other = other.next) {
      if (other !== send && !other.reconciling && other.signature() === signature) return false;
    }
    return true;
  }

  private notify(): void {
    if (this.waiters.size === 0) return;
    for (const wake of [...this.waiters]) wake();
  }

  /** True once `ready()` holds; false when the deadline passes or the signal fires first. */
  private waitFor(ready: () => boolean, until: Until): Promise<boolean> {
    if (ready()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const finish = (ok: boolean): void => {
        this.waiters.delete(check);
        clearTimeout(timer);
        until.signal?.removeEventListener('abort', stop);
        resolve(ok);
      };
      const check = (): void => {
        if (ready()) finish(true);
      };
      const stop = (): void => finish(false);
      const timer = setTimeout(stop, Math.max(0, until.deadline - Date.now()));
      until.signal?.addEventListener('abort', stop, { once: true });
      if (until.signal?.aborted) return stop();
      this.waiters.add(check);
    });
  }
}

/** When a wait must end: the call's deadline (epoch ms) and the caller's signal. */
export interface Until {
  deadline: number;
  signal?: AbortSignal;
}

import type { EmailLog } from '../interfaces/email-records.interface.js';

/** How many records a service instance remembers as already returned by a send. */
export const CLAIMED_RECORDS_CAP = 10_000;

/**
 * Records this service instance has already returned from a send, so that the reconciliation of
 * one call never hands out a record another call was given. A record is known by its id and its
 * creation time (a sandbox that was reset reuses ids). Bounded: the oldest are forgotten first.
 */
export class ClaimedRecords {
  private readonly keys = new Set<string>();
  /** The same keys in claim order, as a ring: evicting the oldest is O(1) (a Set's first entry is not). */
  private readonly ring: (string | undefined)[];
  private next = 0;

  constructor(private readonly cap = CLAIMED_RECORDS_CAP) {
    this.ring = new Array<string | undefined>(cap);
  }

  /** Remembers `record` as taken. */
  claim(record: EmailLog): void {
    const key = keyOf(record);
    if (this.keys.has(key)) return;
    const oldest = this.ring[this.next];
    if (oldest !== undefined) this.keys.delete(oldest);
    this.ring[this.next] = key;
    this.next = (this.next + 1) % this.cap;
    this.keys.add(key);
  }

  /** Whether a send of this instance already got `record`. */
  has(record: EmailLog): boolean {
    return this.keys.has(keyOf(record));
  }
}

function keyOf(record: EmailLog): string {
  return `${record.id}@${record.createdAt.getTime()}`;
}

/** One send of this instance that may still claim a record (see `IdenticalSends`). */
export interface OpenSend {
  /** Whether it waits for, or runs, a look-up (then it cannot claim a record any other way meanwhile). */
  reconciling: boolean;
}

/** The open sends with one signature, and the look-up running for them (at most one). */
interface SendGroup {
  members: Set<OpenSend>;
  lookupRunning: boolean;
  waiters: Set<() => void>;
}

/**
 * Sends of this instance that are still open, grouped by what a look-up matches them on (sender,
 * recipients, subject). A look-up for one of them may take a record only when no other open send of
 * its group can still get a record by an answer (an attempt in flight, or a retry to come with its
 * key, whose replay returns its record): it waits until every other member is itself waiting to look
 * up, and look-ups of a group run one at a time. A send that opens while a look-up of its group runs
 * waits for that look-up before its first attempt, so the look-up cannot see (and take) its record.
 * All waits end at the caller's deadline or signal.
 */
export class IdenticalSends {
  private readonly groups = new Map<string, SendGroup>();

  /** Opens a send with signature `key`; resolves when it may make its first attempt. */
  async open(key: string, until: Until): Promise<OpenSend> {
    const group = this.group(key);
    const send: OpenSend = { reconciling: false };
    group.members.add(send);
    this.notify(group);
    await this.waitFor(group, () => !group.lookupRunning, until); // may end early: the attempt then just goes
    return send;
  }

  /** Closes a send (it has its result or its error). */
  close(key: string, send: OpenSend): void {
    const group = this.groups.get(key);
    if (group === undefined) return;
    group.members.delete(send);
    this.notify(group);
    if (group.members.size === 0 && group.waiters.size === 0) this.groups.delete(key);
  }

  /**
   * Runs `lookup` for `send` once no other member of its group can still claim a record by an
   * answer, and no other look-up of the group runs. Resolves to undefined, without running it, when
   * `until` ends first.
   */
  async exclusive<T>(
    key: string,
    send: OpenSend,
    until: Until,
    lookup: () => Promise<T>,
  ): Promise<T | undefined> {
    const group = this.group(key);
    send.reconciling = true;
    this.notify(group);
    try {
      const ready = await this.waitFor(
        group,
        () => !group.lookupRunning && [...group.members].every((m) => m === send || m.reconciling),
        until,
      );
      if (!ready) return undefined;
      group.lookupRunning = true;
      try {
        return await lookup();
      } finally {
        group.lookupRunning = false;
      }
    } finally {
      send.reconciling = false;
      this.notify(group);
    }
  }

  private group(key: string): SendGroup {
    let group = this.groups.get(key);
    if (group === undefined) {
      group = { members: new Set(), lookupRunning: false, waiters: new Set() };
      this.groups.set(key, group);
    }
    return group;
  }

  private notify(group: SendGroup): void {
    for (const wake of [...group.waiters]) wake();
  }

  /** True once `ready()` holds; false when the deadline passes or the signal fires first. */
  private waitFor(group: SendGroup, ready: () => boolean, until: Until): Promise<boolean> {
    if (ready()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const finish = (ok: boolean): void => {
        group.waiters.delete(check);
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
      group.waiters.add(check);
    });
  }
}

/** When a wait must end: the call's deadline (epoch ms) and the caller's signal. */
export interface Until {
  deadline: number;
  signal?: AbortSignal;
}

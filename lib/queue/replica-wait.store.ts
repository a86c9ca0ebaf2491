import type { Cluster, Redis } from 'ioredis';
import { writerOf } from './redis-replica.helpers.js';

/** The WAIT in flight on one connection, and the one that will follow it. */
interface Flight {
  current?: Promise<number>;
  next?: Promise<number>;
}

/**
 * Confirms writes on replicas with as few `WAIT`s as possible: one `WAIT` confirms every earlier write of
 * its connection, so writes in flight share one. A caller whose write has been answered joins the next
 * `WAIT` that starts after it asked (at most one in flight per connection: `WAIT` holds its connection
 * anyway); answers how many replicas acknowledged. `npm run bench:cluster` measures what it saves.
 */
export class ReplicaWaits {
  private readonly flights = new WeakMap<Redis, Flight>();

  constructor(
    private readonly client: Redis | Cluster,
    /** Longest a `WAIT` holds (and so its connection). */
    private readonly timeoutMs: number,
    /** Replicas asked for. */
    private readonly replicas = 1,
  ) {}

  /**
   * How many replicas hold every write made so far on `key`'s connection (fewer than asked when the
   * time ran out).
   * @throws Error when the cluster has no master for the key's slot now (a failover under way).
   */
  confirm(key: string): Promise<number> {
    const writer = writerOf(this.client, key);
    if (writer === undefined)
      return Promise.reject(
        new Error('no master of the Redis Cluster holds the key now (a failover under way?)'),
      );
    let flight = this.flights.get(writer);
    if (flight === undefined) this.flights.set(writer, (flight = {}));
    if (flight.next !== undefined) return flight.next;
    const f = flight;
    const mine = (async (): Promise<number> => {
      await Promise.resolve(); // `f.next` is set before this goes on
      if (f.current !== undefined) await f.current.catch(() => undefined);
      f.next = undefined; // still this one: joiners only read it; from now on, callers start the next
      // WAIT with 0 blocks for ever: at least 1 ms
      f.current = writer
        .call('wait', this.replicas, Math.max(1, Math.round(this.timeoutMs)))
        .then((n) => Number(n));
      return f.current;
    })();
    f.next = mine;
    return mine;
  }
}

import { Linked, LinkedList } from '../lists/linked-list.store.js';

/** The longest delay a Node timer takes as it is (a longer one would fire after 1 ms). */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * What `ExchangeDeadlines` holds: something that ends when its deadline passes. It carries its own
 * place in the list (`Linked`: no node, no allocation per exchange).
 */
export abstract class Expiring extends Linked<Expiring> {
  /** @internal when it is due, on the monotonic clock (`performance.now()`) */
  dueAt = 0;

  /** Its deadline passed while it was in the list (called once; it is out of the list by then). */
  abstract expire(): void;
}

/**
 * The deadlines of one transport's exchanges in flight, with one real timer for the earliest. A timer
 * per exchange (a `Timeout`, its closure, its place in Node's timer lists, and clearing it again) cost
 * about 3% of a send; here an exchange is linked into a list kept in deadline order, and out again.
 * The calls of one transport nearly always come with later deadlines than those before them (one
 * `timeoutMs` for all), so adding one looks at the tail only. The timer is set again only when it fires
 * (for the new earliest, if any) and when an earlier deadline comes; it is cleared when the list empties,
 * so no timer outlives the last exchange, and the process is held up exactly while one is in flight.
 * The clock is monotonic, as a Node timer's is: a change of the wall clock moves no deadline.
 */
export class ExchangeDeadlines {
  readonly #list = new LinkedList<Expiring>();
  #timer: NodeJS.Timeout | undefined;
  /** When the timer is set to fire (monotonic ms); Infinity when none is set. */
  #timerAt = Infinity;

  /** Ends `item` (`expire`) in `ms` ms, unless it is removed first. */
  add(item: Expiring, ms: number): void {
    const at = performance.now() + ms;
    item.dueAt = at;
    let before = this.#list.last;
    while (before !== null && before.dueAt > at) before = before.prev;
    this.#list.insertAfter(before, item);
    if (at < this.#timerAt) this.#arm(at);
  }

  /** Takes `item` out (it settled before its deadline); an item not in the list is left alone. */
  remove(item: Expiring): void {
    this.#list.remove(item);
    if (this.#list.first === null && this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#timerAt = Infinity;
    }
  }

  #arm(at: number): void {
    clearTimeout(this.#timer);
    this.#timerAt = at;
    const ms = Math.min(Math.max(0, Math.ceil(at - performance.now())), MAX_TIMER_MS);
    this.#timer = setTimeout(this.#fire, ms);
  }

  /** Ends every item that is due, then sets the timer for the earliest left. */
  readonly #fire = (): void => {
    this.#timer = undefined;
    this.#timerAt = Infinity;
    try {
      // Node counts a timer's delay in whole milliseconds: what is due within the next one is due.
      const now = performance.now() + 1;
      for (let item = this.#list.first; item !== null && item.dueAt < now; item = this.#list.first) {
        this.remove(item);
        item.expire();
      }
    } finally {
      const first = this.#list.first;
      if (first !== null && first.dueAt < this.#timerAt) this.#arm(first.dueAt);
    }
  };
}

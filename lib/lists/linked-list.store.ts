/**
 * An item that carries its own place in one `LinkedList`: the list allocates no node per item, and linking
 * and unlinking an item are a few stores. `T` is the item's own class, so its neighbours are typed as it is.
 * An item is in one list at a time.
 */
export abstract class Linked<T extends Linked<T>> {
  /** @internal whether it is in a list now */
  listed = false;
  /** @internal its neighbours in that list */
  prev: T | null = null;
  /** @internal */
  next: T | null = null;
}

/**
 * A doubly linked list of items that carry their own links (`Linked`). The module keeps two on the path of
 * every send: the transport's deadlines (`ExchangeDeadlines`) and the open sends (`IdenticalSends`). A `Set`
 * or a node per item there would be allocated and collected with each send.
 */
export class LinkedList<T extends Linked<T>> {
  /** The first item, or null when the list is empty. */
  first: T | null = null;
  /** The last item, or null when the list is empty. */
  last: T | null = null;

  /** Puts `item`, which is in no list, after `before` (first when `before` is null). */
  insertAfter(before: T | null, item: T): void {
    const after = before === null ? this.first : before.next;
    item.prev = before;
    item.next = after;
    if (before === null) this.first = item;
    else before.next = item;
    if (after === null) this.last = item;
    else after.prev = item;
    item.listed = true;
  }

  /** Puts `item`, which is in no list, last. */
  append(item: T): void {
    this.insertAfter(this.last, item);
  }

  /** Takes `item` out of this list; an item in no list is left alone. */
  remove(item: T): void {
    if (!item.listed) return;
    const { prev, next } = item;
    if (prev === null) this.first = next;
    else prev.next = next;
    if (next === null) this.last = prev;
    else next.prev = prev;
    item.listed = false;
    item.prev = null;
    item.next = null;
  }
}

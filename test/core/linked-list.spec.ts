import { Linked, LinkedList } from '../../lib/lists/linked-list.store.js';

class Item extends Linked<Item> {
  constructor(readonly n: number) {
    super();
  }
}

/** The list read both ways; the backward read, reversed, must be the forward one. */
function read(list: LinkedList<Item>): number[] {
  const forward: number[] = [];
  for (let item = list.first; item !== null; item = item.next) forward.push(item.n);
  const backward: number[] = [];
  for (let item = list.last; item !== null; item = item.prev) backward.unshift(item.n);
  expect(backward).toEqual(forward);
  return forward;
}

/** A small seeded generator, so that a failing sequence can be run again. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1_664_525) + 1_013_904_223) >>> 0) / 2 ** 32;
}

describe('LinkedList (items that carry their own links: deadlines, open sends)', () => {
  it('keeps the order an array would keep, through any mix of appends, inserts and removals', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const next = random(seed);
      const list = new LinkedList<Item>();
      const model: Item[] = [];
      const items = Array.from({ length: 12 }, (_, n) => new Item(n));
      for (let step = 0; step < 60; step++) {
        const item = items[Math.floor(next() * items.length)]!;
        if (item.listed) {
          list.remove(item);
          model.splice(model.indexOf(item), 1);
        } else if (next() < 0.5) {
          list.append(item);
          model.push(item);
        } else {
          const at = Math.floor(next() * (model.length + 1)); // after model[at - 1], first when 0
          list.insertAfter(at === 0 ? null : model[at - 1]!, item);
          model.splice(at, 0, item);
        }
        expect(read(list)).toEqual(model.map((i) => i.n));
        for (const i of items) expect(i.listed).toBe(model.includes(i));
      }
    }
  });

  it('leaves an item in no list alone, and an item taken out holds no neighbour', () => {
    const list = new LinkedList<Item>();
    const [a, b, c] = [new Item(0), new Item(1), new Item(2)];
    list.append(a);
    list.append(b);
    list.append(c);
    list.remove(b);
    list.remove(b); // twice: nothing more happens
    expect(read(list)).toEqual([0, 2]);
    expect([b.listed, b.prev, b.next]).toEqual([false, null, null]);
    list.remove(a);
    list.remove(c);
    expect([list.first, list.last]).toEqual([null, null]);
  });
});

import { ExchangeDeadlines, Expiring } from '../../lib/http/exchange-deadlines.store.js';

/** An item that notes when it expired (ms after `start`). */
class Noted extends Expiring {
  expiredAfter: number | undefined;
  constructor(
    readonly name: string,
    private readonly start: number,
    private readonly log: string[],
  ) {
    super();
  }
  expire(): void {
    this.expiredAfter = performance.now() - this.start;
    this.log.push(this.name);
  }
}

const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

/** Resolves once `log` holds `count` names (checked every few ms; the test's timeout bounds it). */
async function logged(log: string[], count: number): Promise<void> {
  while (log.length < count) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('ExchangeDeadlines (one timer for a transport exchanges)', () => {
  it('ends each item once, in deadline order whatever the order it came in, never before its time', async () => {
    const deadlines = new ExchangeDeadlines();
    const log: string[] = [];
    const start = performance.now();
    const items = [
      ['c', 60],
      ['a', 20],
      ['d', 60],
      ['b', 40],
    ].map(([name, ms]) => {
      const item = new Noted(name as string, start, log);
      deadlines.add(item, ms as number);
      return [item, ms as number] as const;
    });
    await logged(log, 4);
    expect(log).toEqual(['a', 'b', 'c', 'd']);
    for (const [item, ms] of items) expect(item.expiredAfter).toBeGreaterThanOrEqual(ms - 1);
  });

  it('never ends an item taken out, and holds no timer once the list is empty', async () => {
    const before = timers();
    const deadlines = new ExchangeDeadlines();
    const log: string[] = [];
    const start = performance.now();
    const kept = new Noted('kept', start, log);
    const settled = new Noted('settled', start, log);
    deadlines.add(settled, 10);
    deadlines.add(kept, 30);
    expect(timers()).toBe(before + 1);
    deadlines.remove(settled);
    deadlines.remove(settled); // twice: nothing more happens
    await logged(log, 1); // `kept` is due after `settled` was
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(log).toEqual(['kept']);
    expect(timers()).toBe(before);
    const last = new Noted('last', start, log);
    deadlines.add(last, 1000);
    deadlines.remove(last);
    expect(timers()).toBe(before); // the last one out clears the timer at once
  });

  it('takes an item added while another ends', async () => {
    const deadlines = new ExchangeDeadlines();
    const log: string[] = [];
    const start = performance.now();
    const late = new Noted('late', start, log);
    const first = new (class extends Noted {
      override expire(): void {
        super.expire();
        deadlines.add(late, 10);
      }
    })('first', start, log);
    deadlines.add(first, 10);
    await logged(log, 2);
    expect(log).toEqual(['first', 'late']);
  });
});

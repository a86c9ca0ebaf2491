import { Clock, type SleepEnd } from '../../lib/time/clock.helpers.js';
import { useScriptedEmailApp } from '../support/email-app.js';
import { emailDetailJson } from '../support/records.fixture.js';
import { json } from '../support/scripted-server.js';

/**
 * A clock for specs: time stands still until the loop sleeps, and then moves on by exactly the wait
 * asked for, at once. Records every wait.
 */
class TestClock extends Clock {
  readonly waits: number[] = [];
  private offset = 0;

  now(): number {
    return Date.now() + this.offset;
  }

  sleep(ms: number, until: { signal?: AbortSignal; deadline?: number } = {}): Promise<SleepEnd> {
    this.waits.push(ms);
    if (until.signal?.aborted) return Promise.resolve('aborted');
    const cut = until.deadline !== undefined && this.now() + ms > until.deadline;
    this.offset += cut ? Math.max(0, until.deadline! - this.now()) : ms;
    return Promise.resolve(cut ? 'deadline' : 'elapsed');
  }
}

describe('the injectable clock', () => {
  const clock = new TestClock();
  // The module's Clock provider, replaced as any Nest provider is: overrideProvider(Clock).useValue(clock).
  const app = useScriptedEmailApp({
    scope: 'all',
    maxRetries: 1,
    timeoutMs: 45_000,
    overrides: [{ provide: Clock, useValue: clock }],
  });

  it('a 429 with Retry-After: 30 is retried at once, the loop having asked for a 30 s wait', async () => {
    let answers = 0;
    app.server.handle((_req, res) => {
      answers++;
      if (answers === 1) json(res, 429, { error: 'slow down' }, { 'retry-after': '30' });
      else json(res, 200, emailDetailJson());
    });
    const record = await app.email.get(1);
    expect(record.id).toBe(emailDetailJson().id);
    expect(answers).toBe(2);
    expect(clock.waits).toHaveLength(1);
    // the wait asked for is what is left of 30 s after the failure was handled (a few ms at most)
    expect(clock.waits[0]).toBeGreaterThan(29_000);
    expect(clock.waits[0]).toBeLessThanOrEqual(30_000);
  });
});

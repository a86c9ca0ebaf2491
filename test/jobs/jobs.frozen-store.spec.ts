import { emailErrorToHttpException } from '../../lib/interceptors/email-error.helpers.js';
import { ENGINES, lookAlike, postsWith, sleep, useEngine, within } from './jobs.support.js';

/**
 * API.md: with Redis or PostgreSQL frozen (SIGSTOP: connections stay open, nothing answers), `send` (without
 * tx), `status`, `cancel` and `reschedule` settle within `commandTimeoutMs` with the engine's unavailable error,
 * and `waitFor` within its own `timeoutMs`. The bounds below are loose (3 s of slack): they check that each call
 * ends at all, not how fast.
 */
const COMMAND_TIMEOUT_MS = 1500;
const SLACK_MS = 3000;

describe.each(ENGINES)('every call of the %s with its store frozen', (name) => {
  const engine = useEngine(name);

  it('send, status, cancel, reschedule end with the unavailable error; waitFor by its timeout; all is well after', async () => {
    const app = await engine.app({ commandTimeoutMs: COMMAND_TIMEOUT_MS, closeTimeoutMs: 3000 });
    const delayed = await app.jobs.send(lookAlike('Reminder: your cart'), {
      jobId: 'frozen:delayed',
      delayMs: 60_000,
    });
    expect(await app.jobs.status(delayed.jobId)).toMatchObject({ state: 'delayed' });

    engine.freeze();
    const calls: Array<[string, () => Promise<unknown>]> = [
      ['send', () => app.jobs.send(lookAlike('Sent while frozen'), { jobId: 'frozen:send' })],
      ['status', () => app.jobs.status(delayed.jobId)],
      ['cancel', () => app.jobs.cancel(delayed.jobId)],
      ['reschedule', () => app.jobs.reschedule(delayed.jobId, { delayMs: 0 })],
      ['status of an unknown job', () => app.jobs.status('frozen:unknown')],
    ];
    for (const [call, run] of calls) {
      const outcome = await within(run(), COMMAND_TIMEOUT_MS + SLACK_MS);
      expect([call, outcome === 'still running' ? 'still running' : 'settled']).toEqual([call, 'settled']);
      expect([call, 'error' in (outcome as object) ? 'rejected' : 'resolved']).toEqual([call, 'rejected']);
      expect((outcome as { error: unknown }).error).toBeInstanceOf(engine.unavailableError);
    }
    // the same calls at once (a pool or connection already held by the ones above must not stretch them)
    const together = await Promise.all(calls.map(([, run]) => within(run(), COMMAND_TIMEOUT_MS + SLACK_MS)));
    for (const [i, outcome] of together.entries()) {
      expect([calls[i]![0], outcome === 'still running' ? 'still running' : 'settled']).toEqual([
        calls[i]![0],
        'settled',
      ]);
      expect((outcome as { error?: unknown }).error).toBeInstanceOf(engine.unavailableError);
    }
    const waited = await within(app.jobs.waitFor(delayed.jobId, { timeoutMs: 2000 }), 2000 + SLACK_MS);
    expect(waited === 'still running' ? 'still running' : 'settled').toBe('settled');
    expect((waited as { error?: unknown }).error).toBeInstanceOf(engine.unavailableError);
    // a failure of the store, not of the email service: the interceptor answers 503
    expect(emailErrorToHttpException((waited as { error?: unknown }).error)?.getStatus()).toBe(503);
    engine.thaw();

    // thawed: the app works again, with the calls that ended unanswered leaving nothing broken
    const input = lookAlike('Sent after the thaw');
    const after = await app.jobs.send(input, { jobId: 'thawed:1' });
    const record = await app.jobs.waitFor(after.jobId, { timeoutMs: 15_000 });
    expect(engine.sandbox.message(record.id)?.bodyText).toBe(input.text);
    expect(await app.jobs.status(after.jobId)).toMatchObject({ state: 'sent', messageId: record.id });
    const closing = await within(app.close(), 3000 + SLACK_MS);
    expect(closing === 'still running' ? 'still running' : closing).toEqual({ value: undefined });
  }, 90_000);

  it('a store frozen mid-run and thawed: the app cancels, closes cleanly, and a new app on the same jobs sends', async () => {
    const app = await engine.app({ commandTimeoutMs: COMMAND_TIMEOUT_MS, closeTimeoutMs: 3000 });
    await app.jobs.send(lookAlike('Before the freeze'), { jobId: 'frozen:before' });
    await app.jobs.waitFor('frozen:before', { timeoutMs: 15_000 });
    const reminder = await app.jobs.send(lookAlike('Reminder'), {
      jobId: 'frozen:reminder',
      delayMs: 60_000,
    });
    engine.freeze();
    const pending = within(app.jobs.status('frozen:before'), COMMAND_TIMEOUT_MS + SLACK_MS);
    await sleep(500);
    engine.thaw();
    expect(await pending).not.toBe('still running');
    // the connections the freeze interrupted serve the next calls
    expect(await app.jobs.cancel(reminder.jobId)).toEqual({ cancelled: true });
    const closing = await within(app.close(), 3000 + SLACK_MS);
    expect(closing === 'still running' ? 'still running' : closing).toEqual({ value: undefined });

    // thawed: the default commandTimeoutMs, so that a slow machine waking the store up is not a failure
    const next = await engine.app({ namespace: app.namespace });
    const input = lookAlike('After the freeze');
    await next.jobs.send(input, { jobId: 'frozen:after' });
    const record = await next.jobs.waitFor('frozen:after', { timeoutMs: 15_000 });
    expect(engine.sandbox.message(record.id)?.bodyText).toBe(input.text);
    expect(await next.jobs.status(reminder.jobId)).toMatchObject({ state: 'cancelled' });
    expect(postsWith(engine.sandbox, reminder.idempotencyKey)).toEqual([]);
    expect(engine.sandbox.messages()).toHaveLength(2);
  }, 60_000);
});

import { EmailError } from '../../lib/index.js';
import { emailErrorToHttpException } from '../../lib/interceptors/email-error.helpers.js';
import { ENGINES, errorOf, lookAlike, useEngine, within } from './jobs.support.js';

/**
 * Issue 50, item 4: every job call's failure is an `EmailError`. With Redis or PostgreSQL down (its process gone:
 * connections refused, unlike a frozen store that answers nothing), `send`, `sendMany`, `status`, `cancel`,
 * `reschedule` and `waitFor` each reject with the engine's unavailable error (503 through the interceptor), never
 * a raw `connect ECONNREFUSED`; once the store is back, the same app works on.
 */
const COMMAND_TIMEOUT_MS = 1500;

describe.each(ENGINES)('every call of the %s with its store down', (name) => {
  const engine = useEngine(name);

  it('rejects with the unavailable error, an EmailError; the app works again once the store is back', async () => {
    const app = await engine.app({ commandTimeoutMs: COMMAND_TIMEOUT_MS, closeTimeoutMs: 3000 });
    const delayed = await app.jobs.send(lookAlike('Reminder: your cart'), {
      jobId: 'down:delayed',
      delayMs: 60_000,
    });
    await engine.down();

    const calls: Array<[string, () => Promise<unknown>]> = [
      ['send', () => app.jobs.send(lookAlike('Sent while down'), { jobId: 'down:send' })],
      [
        'sendMany',
        () => app.jobs.sendMany([{ input: lookAlike('Many while down'), options: { jobId: 'down:many' } }]),
      ],
      ['status', () => app.jobs.status(delayed.jobId)],
      ['status of an unknown job', () => app.jobs.status('down:unknown')],
      ['cancel', () => app.jobs.cancel(delayed.jobId)],
      ['reschedule', () => app.jobs.reschedule(delayed.jobId, { delayMs: 0 })],
      ['waitFor', () => app.jobs.waitFor(delayed.jobId, { timeoutMs: 2000 })],
    ];
    for (const [call, run] of calls) {
      const outcome = await within(errorOf(run()), 15_000);
      expect([call, outcome === 'still running' ? 'still running' : 'settled']).toEqual([call, 'settled']);
      const err = (outcome as { value: unknown }).value;
      expect([call, (err as Error).name]).toEqual([call, engine.unavailableError.name]);
      expect(err).toBeInstanceOf(engine.unavailableError);
      expect(err).toBeInstanceOf(EmailError);
      expect(emailErrorToHttpException(err)?.getStatus()).toBe(503);
      expect((err as Error).message).not.toMatch(/^connect ECONNREFUSED/);
    }

    await engine.up();
    const input = lookAlike('Sent once the store is back');
    let sent: { jobId: string } | undefined;
    // the app's connections come back on their own (reconnecting with backoff): the first calls may still fail
    for (let i = 0; i < 40 && !sent; i++) {
      sent = await app.jobs.send(input, { jobId: 'down:after' }).catch(async () => {
        await new Promise((r) => setTimeout(r, 250));
        return undefined;
      });
    }
    const record = await app.jobs.waitFor(sent!.jobId, { timeoutMs: 20_000 });
    expect(engine.sandbox.message(record.id)?.bodyText).toBe(input.text);
  }, 90_000);
});

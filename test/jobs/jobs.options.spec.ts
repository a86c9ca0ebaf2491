import { EmailOptionsError } from '../../lib/index.js';
import { resolveEmailOutboxOptions } from '../../lib/outbox/email-outbox.options.js';
import { resolveEmailQueueOptions } from '../../lib/queue/email-queue.options.js';

// The job options both engines share (jobs/email-job.options.ts): one set of defaults, minimums and messages.
// Each engine's options file adds only its own; the same bad shared option reads the same on both.

const QUEUE = { connection: 'redis://127.0.0.1:1' };
const OUTBOX = { connection: 'postgres://app@127.0.0.1:1/shop' };

/** The problems each engine names for `options`, without the module's prefix (empty when accepted). */
function problems(options: Record<string, unknown>): { queue: string[]; outbox: string[] } {
  const of = (prefix: string, resolve: () => unknown): string[] => {
    try {
      resolve();
      return [];
    } catch (err) {
      if (!(err instanceof EmailOptionsError)) throw err;
      return err.problems.map((p) => {
        expect(p.startsWith(`${prefix}: `)).toBe(true);
        return p.slice(prefix.length + 2);
      });
    }
  };
  return {
    queue: of('EmailQueueModule', () => resolveEmailQueueOptions({ ...QUEUE, ...options } as never)),
    outbox: of('EmailOutboxModule', () => resolveEmailOutboxOptions({ ...OUTBOX, ...options } as never)),
  };
}

describe('the job options both engines share', () => {
  it('the same defaults on both engines', () => {
    const queue = resolveEmailQueueOptions(QUEUE);
    const outbox = resolveEmailOutboxOptions(OUTBOX);
    const shared = (o: Record<string, unknown>) => ({
      worker: o.worker,
      concurrency: o.concurrency,
      attempts: o.attempts,
      backoff: o.backoff,
      keepSentForMs: o.keepSentForMs,
      keepFailedForMs: o.keepFailedForMs,
      closeTimeoutMs: o.closeTimeoutMs,
      commandTimeoutMs: o.commandTimeoutMs,
    });
    expect(shared({ ...queue })).toEqual(shared({ ...outbox }));
    expect(shared({ ...queue })).toEqual({
      worker: true,
      concurrency: 10,
      attempts: 8,
      backoff: { delayMs: 1000, maxDelayMs: 60_000 },
      keepSentForMs: 7 * 86_400_000,
      keepFailedForMs: 30 * 86_400_000,
      closeTimeoutMs: 30_000,
      commandTimeoutMs: 10_000,
    });
  });

  it.each([
    [{ concurrency: 0 }, 'concurrency must be an integer of at least 1 (got 0)'],
    [{ attempts: 1.5 }, 'attempts must be an integer of at least 1 (got 1.5)'],
    [{ backoff: { delayMs: -1 } }, 'backoff.delayMs must be a number of milliseconds >= 0 (got -1)'],
    [
      { backoff: { maxDelayMs: 'soon' } },
      'backoff.maxDelayMs must be a number of milliseconds >= 0 (got "soon")',
    ],
    [{ backoff: 'fast' }, 'backoff must be an object { delayMs, maxDelayMs } (got "fast")'],
    [{ keepSentForMs: 0 }, 'keepSentForMs must be a number of milliseconds >= 1000 (got 0)'],
    [{ keepFailedForMs: 999 }, 'keepFailedForMs must be a number of milliseconds >= 1000 (got 999)'],
    [{ closeTimeoutMs: -5 }, 'closeTimeoutMs must be a number of milliseconds >= 0 (got -5)'],
    [{ commandTimeoutMs: 0 }, 'commandTimeoutMs must be a number of milliseconds >= 1 (got 0)'],
    [{ commandTimeoutMs: Infinity }, 'commandTimeoutMs must be a number of milliseconds >= 1 (got Infinity)'],
    [{ worker: 'yes' }, 'worker must be true or false (got "yes")'],
    [{ emailService: ' ' }, 'emailService must be the name of an EmailModule instance (got " ")'],
  ])('%j is refused by both engines with one message', (options, message) => {
    expect(problems(options)).toEqual({ queue: [message], outbox: [message] });
  });

  it('the least values are accepted by both engines', () => {
    const least = {
      concurrency: 1,
      attempts: 1,
      backoff: { delayMs: 0, maxDelayMs: 0 },
      keepSentForMs: 1000,
      keepFailedForMs: 1000,
      closeTimeoutMs: 0,
      commandTimeoutMs: 1,
    };
    expect(problems(least)).toEqual({ queue: [], outbox: [] });
    expect(resolveEmailOutboxOptions({ ...OUTBOX, ...least })).toMatchObject(least);
    expect(resolveEmailQueueOptions({ ...QUEUE, ...least })).toMatchObject(least);
  });

  it("each engine still checks its own options, and the queue's older commandTimeoutMs name still counts", () => {
    expect(problems({ queueName: 'a:b' }).queue).toEqual([
      'queueName must be a non-empty string without ":" (BullMQ refuses it; got "a:b")',
    ]);
    expect(problems({ pollingIntervalMs: 10, poolSize: 1 }).outbox).toEqual([
      'poolSize must be an integer of at least 2 (got 1)',
      'pollingIntervalMs must be a number of milliseconds >= 100 (got 10)',
    ]);
    expect(resolveEmailQueueOptions({ ...QUEUE, enqueueTimeoutMs: 500 }).commandTimeoutMs).toBe(500);
    expect(problems({ enqueueTimeoutMs: 0 }).queue).toEqual([
      'commandTimeoutMs must be a number of milliseconds >= 1 (got 0)',
    ]);
  });
});

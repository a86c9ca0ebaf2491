// PostgreSQL restarted (a fast shutdown: every connection ends with 57P01) under an app whose worker is sending
// and whose writes are under way. pg-pool takes its `error` listener off a client it hands out, and pg emits
// `error` on such a client when its connection drops, even while a statement runs: the outbox's own held
// clients (its named statements, its own transactions) must carry a listener, or the process ends with an
// unhandled `error` event (Jest reports it as this suite failing to run).
import { EmailOutboxUnavailableError } from '../../lib/outbox/index.js';
import { EmailSandbox } from '../../lib/testing/index.js';
import { lookAlike, SANDBOX_OPTIONS, templated } from '../jobs/jobs.support.js';
import { startPostgres } from '../support/postgres-server.mjs';
import { outboxApp } from './outbox.support.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Look-alike mail (one sender, recipient and subject, five bodies), identical mail, and template mail. */
const input = (i: number) => (i % 4 === 0 ? templated(String(1000 + (i % 3))) : lookAlike(`Body ${i % 5}`));

describe('EmailOutbox while PostgreSQL restarts under load', () => {
  it('the process keeps running; every job written is sent once; a write under way fails typed or lands', async () => {
    if (process.env.DATABASE_URL) return; // needs a private server it can restart
    const postgres = await startPostgres();
    const sandbox = await EmailSandbox.start(SANDBOX_OPTIONS);
    // The attempt's timeout stays at its default (120 s): a job whose claim or outcome could not be written at the
    // restart is given back once PostgreSQL answers, not left to expire, so each waitFor below ends in seconds.
    const app = await outboxApp(sandbox, { connection: postgres.url, concurrency: 4 });
    const crashes: unknown[] = [];
    const onCrash = (err: unknown) => crashes.push(err);
    process.on('uncaughtException', onCrash);
    try {
      const before = Array.from({ length: 40 }, (_, i) => ({
        input: input(i),
        options: { jobId: `before-${i}` },
      }));
      await app.outbox.sendMany(before);
      // Writes in their own transactions, one after the other, across the restart.
      let writing = true;
      const written: string[] = [];
      const refused: string[] = [];
      const other: unknown[] = [];
      const writer = (async () => {
        for (let i = 0; writing; i++) {
          const jobId = `during-${i}`;
          try {
            await app.outbox.send(input(i), { jobId });
            written.push(jobId);
          } catch (err) {
            if (err instanceof EmailOutboxUnavailableError) refused.push(jobId);
            else other.push(err);
            await sleep(50);
          }
        }
      })();
      await sleep(150); // the worker is sending the first jobs, the writer is writing
      await postgres.restart();
      await sleep(1000);
      writing = false;
      await writer;
      const after = Array.from({ length: 20 }, (_, i) => ({
        input: input(i),
        options: { jobId: `after-${i}` },
      }));
      await app.outbox.sendMany(after);

      expect(other).toEqual([]);
      expect(written.length).toBeGreaterThan(0);
      // Every job the app was told is written is sent; a write that failed typed was sent (it may have
      // landed) or never written. No job has two messages, and no message lacks its job.
      const confirmed = [...before, ...after].map((j) => j.options.jobId).concat(written);
      const ids = new Map<string, string>();
      for (const jobId of confirmed)
        ids.set(jobId, String((await app.outbox.waitFor(jobId, { timeoutMs: 30_000 })).id));
      for (const jobId of refused) {
        const status = await app.outbox.status(jobId);
        if (status === null) continue;
        ids.set(jobId, String((await app.outbox.waitFor(jobId, { timeoutMs: 30_000 })).id));
      }
      const messages = sandbox.messages().map((m) => String(m.id));
      expect(new Set(ids.values()).size).toBe(ids.size);
      expect(messages.sort()).toEqual([...ids.values()].sort());
      expect(crashes).toEqual([]);
    } finally {
      process.off('uncaughtException', onCrash);
      await app.close();
      await sandbox.close();
      await postgres.stop();
    }
  }, 120_000);
});

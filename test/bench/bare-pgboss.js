// The best bare pg-boss 10 worker we know for the outbox's work, shared by the benches that hold the outbox
// against it (outbox-pgboss.bench.js, and bare-pgboss-worker.child.mjs for outbox-worker.bench.js): at most
// `concurrency` sends in flight, each calling EmailService.send. One fetch at a time takes as many jobs as there is
// room for (`fetch(name, { batchSize })`, holding at most 2 x concurrency: the sends in flight and the next ones,
// so that a send never waits for a round trip to the database), and the next fetch goes out at once when it found
// jobs (after 0.5 s, pg-boss's shortest polling interval, only when it found none). Finished jobs are completed in
// batches (`complete(name, ids[])`: whatever finished while the previous batch was being written), alongside the
// fetches. No poll between jobs, no round trip per job.

/**
 * Starts the worker on `boss`'s queue `email`; `onSent.sent(job)` per email, `onSent.fail(err)` on any failure
 * (the bench server answers 201 to every send: a failure means no figure). `fetched` collects each fetch's size.
 */
export function bareWorker(boss, email, onSent, { concurrency, fetched = [] }) {
  const EMPTY_POLL_MS = 500;
  const HOLD = 2 * concurrency;
  const ready = [];
  let inFlight = 0;
  let stopped = false;
  let finished = [];
  let completing = null;
  let wake = null;
  const wakeUp = () => {
    wake?.();
    wake = null;
  };
  const completeFinished = () => {
    if (completing !== null || finished.length === 0) return;
    const ids = finished;
    finished = [];
    completing = boss.complete('email', ids).then(() => {
      completing = null;
      completeFinished();
    });
    completing.catch(onSent.fail);
  };
  const startSends = () => {
    while (inFlight < concurrency && ready.length > 0) {
      inFlight++;
      void run(ready.shift());
    }
  };
  const run = async (job) => {
    try {
      await email.send(job.data.input, { idempotencyKey: job.data.key, maxRetries: 0, reconcile: false });
    } catch (err) {
      onSent.fail(err);
      return;
    }
    inFlight--;
    finished.push(job.id);
    onSent.sent(job);
    completeFinished();
    startSends();
    wakeUp();
  };
  const loop = (async () => {
    while (!stopped) {
      const room = HOLD - inFlight - ready.length;
      if (room === 0) {
        await new Promise((r) => (wake = r));
        continue;
      }
      const jobs = await boss.fetch('email', { batchSize: room });
      fetched.push(jobs?.length ?? 0);
      if (jobs === null || jobs.length === 0) {
        await new Promise((r) => {
          wake = r;
          setTimeout(r, EMPTY_POLL_MS);
        });
        continue;
      }
      ready.push(...jobs);
      startSends();
    }
  })();
  return {
    /** Stops fetching, then waits for the sends in flight and writes their completions. */
    async stop() {
      stopped = true;
      wakeUp();
      await loop;
      if (ready.length > 0) throw new Error(`${ready.length} fetched jobs were never sent`);
      while (inFlight > 0 || completing !== null || finished.length > 0) {
        completeFinished();
        await (completing ?? new Promise((r) => setTimeout(r, 5)));
      }
    },
  };
}

// A job this process is still sending can come back to it in a later fetch: its attempt ran past
// `attemptTimeoutMs` and pg-boss took it back, or a failover promoted a standby where it waits. The copy held goes
// on and writes the outcome; the second copy is dropped. Run beside the first, it POSTed the key while the service
// held it; run after the first had ended, it once broke the worker's loop ("Cannot set properties of undefined
// (setting 'started')", found by the failover spec on a busy machine).
import { EmailOutbox, EmailOutboxModule, EmailOutboxWorker } from '../../lib/outbox/index.js';
import { emailApp } from '../support/email-app.js';
import { FAST, freshSchema, posts, until, useOutboxWorld } from './outbox.support.js';

const world = useOutboxWorld();

const order = (text: string) => ({
  from: 'shop@example.com',
  to: ['ada@example.org'],
  subject: 'Your order',
  text,
});

describe('a job fetched again while this process still sends it', () => {
  it('is never run beside the run that holds it: no POST of its key while one is in flight, one email, and the worker goes on', async () => {
    // the service holds the answer to the job's POST for 4 s, four times its attempt's time: meanwhile pg-boss
    // takes the job back and this worker fetches it again
    world.sandbox.faults.add({ route: 'POST /emails', mode: 'delay', ms: 4_000, at: 'after', times: 1 });
    const { moduleRef, close } = await emailApp({
      apiKey: world.sandbox.apiKey,
      baseUrl: world.sandbox.baseUrl,
      timeoutMs: 20_000,
      imports: [
        EmailOutboxModule.forRoot({
          connection: world.postgres.url,
          schema: freshSchema(),
          ...FAST,
          pollingIntervalMs: 100,
          concurrency: 2, // a send slot free while the first run waits: the job's second copy would take it
          attemptTimeoutMs: 1000,
        }),
      ],
    });
    const outbox = moduleRef.get(EmailOutbox);
    const worker = moduleRef.get(EmailOutboxWorker);
    try {
      const slow = await outbox.send(order('order 1, answered late'));
      await until(() => posts(world.sandbox).length === 1, 15_000, 'the first POST');
      // the worker fetches on while the first run waits for its answer (pg-boss's maintenance runs each second)
      const from = worker.stats.fetches;
      await until(() => worker.stats.fetches >= from + 30, 20_000, 'the worker fetching while it sends');
      await outbox.waitFor(slow.jobId, { timeoutMs: 30_000 });
      const next = await outbox.send(order('order 2, after it'));
      await outbox.waitFor(next.jobId, { timeoutMs: 30_000 });
      expect(world.sandbox.messages().map((m) => m.bodyText)).toEqual([
        'order 1, answered late',
        'order 2, after it',
      ]);
      // A second run beside the first would POST the key while the service still holds it: answered 409. After the
      // first run ended, a later attempt may POST it again (its outcome's write can miss a job pg-boss had taken
      // back meanwhile, on a busy machine): the key is the same, and the service answers it with the same email.
      const sent = posts(world.sandbox);
      expect(sent.filter((p) => p.status === 409)).toEqual([]);
      expect(new Set(sent.map((p) => p.key)).size).toBe(2);
    } finally {
      await close();
    }
  }, 90_000);
});

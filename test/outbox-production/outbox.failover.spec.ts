// A primary's failover under a running outbox: two private PostgreSQL 15 servers (the standby made with
// pg_basebackup -R, streaming from the primary), HAProxy in front as the one address the app is given. The primary
// is crashed (SIGKILL of every process) while orders and their emails are written and sent, and its standby is
// promoted (pg_ctl promote). One topology for the file: synchronous first; then the crashed node rejoins as a
// standby of the new primary, replicating asynchronously, for the second failover.
import pg from 'pg';
import { EmailOutboxUnavailableError } from '../../lib/outbox/index.js';
import { EmailSandbox } from '../../lib/testing/index.js';
import { errorOf, until } from '../jobs/jobs.support.js';
import { startFailoverTopology, type FailoverTopology } from '../support/postgres-failover.mjs';
import {
  expectSentOnce,
  jobIdsOf,
  keepWriting,
  mailOf,
  ordersPresent,
  ORDERS_TABLE,
  productionApp,
  SANDBOX_OPTIONS,
  writeOrders,
} from './production.support.js';

let topology: FailoverTopology;
let sandbox: EmailSandbox;

beforeAll(async () => {
  topology = await startFailoverTopology({ synchronous: true });
  try {
    const pool = new pg.Pool({ connectionString: topology.url, max: 1 });
    await pool.query(ORDERS_TABLE);
    await pool.end();
    sandbox = await EmailSandbox.start(SANDBOX_OPTIONS);
  } catch (err) {
    await topology.stop();
    throw err;
  }
}, 60_000);
afterAll(async () => {
  await sandbox?.close();
  await topology?.stop();
});
beforeEach(() => sandbox.reset());

/**
 * The app through HAProxy: a worker of 4, attempts that expire after 2 s (a job whose claim reached the standby
 * but whose worker lost it at the crash comes back soon), calls bounded at 2 s; and a pool of the app's own.
 */
async function appThroughProxy(
  options: Partial<Parameters<typeof productionApp>[1]> & { sandbox?: EmailSandbox } = {},
) {
  const { sandbox: to = sandbox, ...outboxOptions } = options;
  const app = await productionApp(to, {
    connection: topology.url,
    concurrency: 4,
    attemptTimeoutMs: 2000,
    commandTimeoutMs: 2000,
    ...outboxOptions,
  });
  const pool = new pg.Pool({ connectionString: topology.url, max: 4, connectionTimeoutMillis: 3000 });
  pool.on('error', () => undefined); // idle clients cut by the crash
  return {
    ...app,
    pool,
    close: async () => {
      await app.close();
      await pool.end();
    },
  };
}

describe('EmailOutbox through a primary’s failover (HAProxy, pg_ctl promote)', () => {
  it('synchronous replication: every committed job sent exactly once, none lost; calls meanwhile fail typed; the worker comes back by itself', async () => {
    const app = await appThroughProxy();
    try {
      const writer = keepWriting(app.pool, app.outbox, 'sync');
      await until(() => sandbox.messages().length >= 10, 20_000, 'the first emails');
      // While no node takes writes, a call settles with the outbox's unavailable error (within commandTimeoutMs).
      const meanwhile: unknown[] = [];
      await topology.failover({
        beforePromote: async () => {
          meanwhile.push(await errorOf(app.outbox.send(mailOf('sync-window', 1), { jobId: 'sync-window' })));
          meanwhile.push(await errorOf(app.outbox.status('sync-0')));
        },
      });
      const atFailover = writer.outcomes.committed.length;
      await until(
        () => writer.outcomes.committed.length >= atFailover + 10,
        20_000,
        'commits on the promoted standby',
      );
      const { committed, failed } = await writer.stop();
      expect(meanwhile).toEqual([
        expect.any(EmailOutboxUnavailableError),
        expect.any(EmailOutboxUnavailableError),
      ]);
      // A commit the primary acknowledged was on the standby first: none lost.
      const present = await ordersPresent(app.pool, [...committed, ...failed.map((f) => f.ref)]);
      expect(committed.filter((ref) => !present.has(ref))).toEqual([]);
      // A transaction cut by the crash is wholly kept or wholly gone, its email with its order.
      const cut = failed.map((f) => f.ref);
      for (const ref of cut.filter((r) => !present.has(r)))
        for (const jobId of jobIdsOf(ref)) expect(await app.outbox.status(jobId)).toBeNull();
      expect(await app.outbox.status('sync-window')).toBeNull();
      // Every kept order's jobs sent once, by the same worker, before and after the failover; no other email.
      await expectSentOnce(app.outbox, sandbox, [...committed, ...cut.filter((r) => present.has(r))]);
      await until(() => app.worker.listening, 20_000, 'the LISTEN connection on the new primary');
    } finally {
      await app.close();
    }
  }, 90_000);

  it('asynchronous replication: commits the standby never received are lost with their emails, never one without the other', async () => {
    await topology.rejoin({ synchronous: false });
    const app = await appThroughProxy();
    // Beside it, an app that does not wait for the standby (waitForStandbys: false, not the default), on a
    // sandbox of its own: what the wait prevents.
    const unwaitedSandbox = await EmailSandbox.start(SANDBOX_OPTIONS);
    const unwaited = await appThroughProxy({ waitForStandbys: false, sandbox: unwaitedSandbox });
    try {
      const before = await writeOrders(app.pool, app.outbox, 'async-before', { from: 0, to: 12 });
      await expectSentOnce(app.outbox, sandbox, before.committed);
      const sentBefore = sandbox.messages().length;
      // An address that reaches the standby (a former primary back as one, a DNS name not yet moved): a write is
      // refused typed, naming why; nothing is written.
      const onStandby = await productionApp(sandbox, {
        connection: topology.standby.url,
        schema: app.schema,
        migrate: false,
        worker: false,
        commandTimeoutMs: 2000,
      });
      const readOnly = await errorOf(onStandby.outbox.send(mailOf('read-only', 1), { jobId: 'read-only' }));
      await onStandby.close();
      expect(readOnly).toBeInstanceOf(EmailOutboxUnavailableError);
      expect((readOnly as Error).message).toContain('25006: read-only');
      expect(readOnly).toMatchObject({ outcome: 'not-sent' });
      expect(await app.outbox.status('read-only')).toBeNull();
      // The primary's commits stop reaching the standby; the primary still takes them.
      const release = await topology.holdReplication();
      const held = await writeOrders(app.pool, app.outbox, 'async-held', { from: 0, to: 9 });
      const heldUnwaited = await writeOrders(unwaited.pool, unwaited.outbox, 'unwaited', { from: 0, to: 6 });
      expect([...held.failed, ...heldUnwaited.failed]).toEqual([]);
      const unwaitedJobs = heldUnwaited.committed.flatMap(jobIdsOf);
      await until(
        () => unwaitedSandbox.messages().length === unwaitedJobs.length,
        15_000,
        'the emails of the app that does not wait',
      );
      await until(() => (app.worker.standbys?.waits ?? 0) > 0, 10_000, 'the worker holding its sends');
      expect(sandbox.messages()).toHaveLength(sentBefore);
      await topology.failover();
      release();
      const after = await writeOrders(app.pool, app.outbox, 'async-after', { from: 0, to: 12 });
      expect(after.failed).toEqual([]);
      // What asynchronous replication loses: those orders, and their jobs with them.
      const lost = [...held.committed, ...heldUnwaited.committed];
      expect([...(await ordersPresent(app.pool, lost))]).toEqual([]);
      for (const ref of held.committed)
        for (const jobId of jobIdsOf(ref)) expect(await app.outbox.status(jobId)).toBeNull();
      // No email went out for them: the emails are exactly those of the orders that exist.
      await expectSentOnce(app.outbox, sandbox, [...before.committed, ...after.committed]);
      // Without the wait, every one of them was emailed: emails about orders that are gone.
      expect(unwaitedSandbox.messages()).toHaveLength(unwaitedJobs.length);
    } finally {
      await unwaited.close();
      await unwaitedSandbox.close();
      await app.close();
    }
  }, 90_000);
});

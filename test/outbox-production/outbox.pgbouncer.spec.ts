// The outbox behind PgBouncer 1.18 (Debian's `pgbouncer`), started by this file in front of a private PostgreSQL
// that logs every statement: in transaction mode (a server connection per transaction, shared by every client)
// and in session mode (one per client connection). The app's transactions, the outbox's own statements and its
// worker all go through the pooler; the worker's LISTEN goes straight to PostgreSQL when it is given a
// `listenConnection`, and the worker polls otherwise.
import pg from 'pg';
import { EmailSandbox } from '../../lib/testing/index.js';
import { sleep, until } from '../jobs/jobs.support.js';
import { startPgBouncer, type TestPgBouncer } from '../support/pgbouncer-server.mjs';
import { startPostgres, type TestPostgres } from '../support/postgres-server.mjs';
import {
  expectSentOnce,
  jobIdsOf,
  ORDERS_TABLE,
  productionApp,
  SANDBOX_OPTIONS,
  writeOrders,
} from './production.support.js';

type Mode = 'transaction' | 'session';

let postgres: TestPostgres;
let bouncer: TestPgBouncer;
let sandbox: EmailSandbox;
const direct = () => postgres.url;
const through = (mode: Mode) => (mode === 'transaction' ? bouncer.transactionUrl : bouncer.sessionUrl);

/** The statements PostgreSQL logged since `mark` (its log's length then). */
const loggedSince = (mark: number) => postgres.log().slice(mark);

/**
 * The statement log is read where the server is ours; with DATABASE_URL (and PGBOUNCER_TRANSACTION_URL and
 * PGBOUNCER_SESSION_URL for poolers in front of it) the specs run there without it.
 */
const logged = () => postgres.port !== undefined;

beforeAll(async () => {
  postgres = await startPostgres(
    process.env.DATABASE_URL ? undefined : { log: true, settings: { log_statement: 'all' } },
  );
  try {
    bouncer = await startPgBouncer(postgres.url, { poolSize: 16 });
    const pool = new pg.Pool({ connectionString: postgres.url, max: 1 });
    await pool.query(ORDERS_TABLE);
    await pool.end();
    sandbox = await EmailSandbox.start(SANDBOX_OPTIONS);
  } catch (err) {
    await bouncer?.stop();
    await postgres.stop();
    throw err;
  }
}, 60_000);
afterAll(async () => {
  await sandbox?.close();
  await bouncer?.stop();
  await postgres?.stop();
});
beforeEach(() => sandbox?.reset());

/** An app whose every connection but `listenConnection` goes through the pooler in `mode`, and a pool of the app's. */
async function pooledApp(mode: Mode, options: Parameters<typeof productionApp>[1]) {
  const app = await productionApp(sandbox, { concurrency: 4, ...options });
  const pool = new pg.Pool({ connectionString: through(mode), max: 4 });
  pool.on('error', () => undefined);
  return {
    ...app,
    pool,
    close: async () => {
      await app.close();
      await pool.end();
    },
  };
}

describe.each<Mode>(['transaction', 'session'])('EmailOutbox behind PgBouncer in %s mode', (mode) => {
  it('a committed transaction sends its email once; a rolled-back one sends nothing', async () => {
    const mark = postgres.log().length;
    const app = await pooledApp(mode, {
      connection: through(mode),
      pooler: mode,
      ...(mode === 'transaction' ? { listenConnection: direct() } : {}),
    });
    try {
      const run = `${mode}-tx`;
      const written = await writeOrders(app.pool, app.outbox, run, {
        from: 0,
        to: 24,
        parallel: 6,
        rollBack: (i) => i % 4 === 1,
      });
      expect(written.failed).toEqual([]);
      expect(written.rolledBack).toHaveLength(6);
      await expectSentOnce(app.outbox, sandbox, written.committed);
      for (const ref of written.rolledBack)
        for (const jobId of jobIdsOf(ref)) expect(await app.outbox.status(jobId)).toBeNull();
      const log = loggedSince(mark);
      if (!logged()) return;
      if (mode === 'transaction') {
        // Nothing that a shared server connection would carry to another client: no named statement, no SET.
        expect(log).not.toMatch(/execute email_outbox_/);
        expect(log).not.toMatch(/plan_cache_mode/);
      } else {
        // A session keeps its server connection: the worker's statements are parsed once, by name.
        expect(log).toMatch(/execute email_outbox_[0-9a-f]{24}/);
      }
    } finally {
      await app.close();
    }
  });
});

describe('the worker’s wake behind PgBouncer', () => {
  /** Longer than any test here: a job sent at all was sent because a commit woke the worker. */
  const NEVER_POLLS = 600_000;

  it('transaction mode: a commit wakes the worker through listenConnection, straight to PostgreSQL', async () => {
    const app = await pooledApp('transaction', {
      connection: through('transaction'),
      pooler: 'transaction',
      listenConnection: direct(),
      pollingIntervalMs: NEVER_POLLS,
    });
    try {
      await until(() => app.worker.listening, 10_000, 'the LISTEN connection');
      await sleep(300); // the worker's first looks (at start, and once listening) are behind it
      const before = app.worker.stats.fetches;
      const written = await writeOrders(app.pool, app.outbox, 'wake-direct', { from: 0, to: 6 });
      expect(written.failed).toEqual([]);
      await expectSentOnce(app.outbox, sandbox, written.committed, 15_000);
      expect(app.worker.stats.notifications).toBeGreaterThanOrEqual(1);
      expect(app.worker.stats.fetches).toBeGreaterThan(before);
    } finally {
      await app.close();
    }
  });

  it('transaction mode without listenConnection: nothing LISTENs anywhere, the worker polls and sends', async () => {
    const mark = postgres.log().length;
    const app = await pooledApp('transaction', {
      connection: through('transaction'),
      pooler: 'transaction',
      pollingIntervalMs: 200,
    });
    try {
      const written = await writeOrders(app.pool, app.outbox, 'wake-poll', { from: 0, to: 6 });
      expect(written.failed).toEqual([]);
      await expectSentOnce(app.outbox, sandbox, written.committed, 15_000);
      // With every job sent, the worker goes on looking by itself: a poll that finds nothing (the sends may all
      // have been found by polls that had jobs, so it is waited for, not assumed).
      await until(() => app.worker.stats.emptyFetches > 0, 10_000, 'a poll that finds nothing');
      expect(app.worker.listening).toBe(false);
      expect(app.worker.stats.notifications).toBe(0);
      // A LISTEN through a transaction pooler would land on a shared server connection: none was sent.
      if (logged()) expect(loggedSince(mark)).not.toMatch(/statement: LISTEN/);
    } finally {
      await app.close();
    }
  });

  it('session mode: the LISTEN through the pooler keeps its server connection and hears every commit', async () => {
    const app = await pooledApp('session', {
      connection: through('session'),
      pooler: 'session',
      pollingIntervalMs: NEVER_POLLS,
    });
    try {
      await until(() => app.worker.listening, 10_000, 'the LISTEN connection');
      await sleep(300);
      const written = await writeOrders(app.pool, app.outbox, 'wake-session', { from: 0, to: 6 });
      expect(written.failed).toEqual([]);
      await expectSentOnce(app.outbox, sandbox, written.committed, 15_000);
      expect(app.worker.stats.notifications).toBeGreaterThanOrEqual(1);
    } finally {
      await app.close();
    }
  });

  it('a transaction pooler the outbox was not told of: every email still sent once (names dropped at the first refusal, polling)', async () => {
    const app = await pooledApp('transaction', {
      connection: through('transaction'),
      pollingIntervalMs: 200,
    });
    try {
      const written = await writeOrders(app.pool, app.outbox, 'untold', {
        from: 0,
        to: 24,
        parallel: 6,
        rollBack: (i) => i % 4 === 1,
      });
      expect(written.failed).toEqual([]);
      await expectSentOnce(app.outbox, sandbox, written.committed);
    } finally {
      await app.close();
    }
  });
});

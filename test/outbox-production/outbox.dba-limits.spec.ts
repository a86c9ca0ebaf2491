// The outbox under a DBA's limits, on a private PostgreSQL of its own (max_connections 30): a role that may create
// nothing (the schema made by the SQL `email-outbox-sql` prints, the app on `migrate: false`), a statement_timeout
// shorter than a fetch, idle_in_transaction_session_timeout, and max_connections reached. Each is a clear error or
// the documented behaviour, and nothing is lost.
import pg from 'pg';
import { EmailOutboxUnavailableError, outboxSetupSql } from '../../lib/outbox/index.js';
import { parseOutboxSetupArgs } from '../../lib/outbox/outbox-setup.helpers.js';
import { EmailSandbox } from '../../lib/testing/index.js';
import { errorOf, sleep, until } from '../jobs/jobs.support.js';
import { startPostgres, type TestPostgres } from '../support/postgres-server.mjs';
import {
  expectSentOnce,
  freshSchema,
  jobIdsOf,
  mailOf,
  ORDERS_TABLE,
  productionApp,
  SANDBOX_OPTIONS,
  writeOrders,
} from './production.support.js';

let postgres: TestPostgres;
let admin: pg.Pool;
let sandbox: EmailSandbox;
/** The app's role: LOGIN, no CREATE anywhere, not a superuser. */
const appUrl = () => postgres.url.replace('postgres://postgres@', 'postgres://app@');

beforeAll(async () => {
  postgres = await startPostgres({ settings: { max_connections: 30, superuser_reserved_connections: 3 } });
  try {
    admin = new pg.Pool({ connectionString: postgres.url, max: 2 });
    admin.on('error', () => undefined);
    await admin.query('CREATE ROLE app LOGIN');
    await admin.query(ORDERS_TABLE);
    await admin.query('GRANT SELECT, INSERT ON orders TO app');
    sandbox = await EmailSandbox.start(SANDBOX_OPTIONS);
  } catch (err) {
    await admin?.end();
    await postgres.stop();
    throw err;
  }
}, 60_000);
afterAll(async () => {
  await sandbox?.close();
  await admin?.end();
  await postgres?.stop();
});
beforeEach(() => sandbox.reset());

/** The schema made by the DBA: the SQL of `email-outbox-sql --schema <schema> --role app`, run as a superuser. */
async function dbaSchema(): Promise<string> {
  const schema = freshSchema();
  const options = parseOutboxSetupArgs(['--schema', schema, '--role', 'app']);
  if (options === 'help') throw new Error('unreachable');
  await admin.query(outboxSetupSql(options));
  return schema;
}

/** The app as the role `app`, on a schema the DBA made, and a pool of the app's own (as `app` too). */
async function appOnDbaSchema(schema: string, options: Partial<Parameters<typeof productionApp>[1]> = {}) {
  const app = await productionApp(sandbox, {
    connection: appUrl(),
    schema,
    migrate: false,
    concurrency: 2,
    ...options,
  });
  const pool = new pg.Pool({ connectionString: appUrl(), max: 3, idleTimeoutMillis: 0 });
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

describe('a role that may create nothing', () => {
  it('migrate left on: the boot fails naming the privilege and the command that prints the DBA’s SQL; nothing is made', async () => {
    const schema = freshSchema();
    const failure = await errorOf(productionApp(sandbox, { connection: appUrl(), schema }));
    expect(failure).toBeInstanceOf(EmailOutboxUnavailableError);
    const message = (failure as Error).message;
    expect(message).toContain('42501: the role lacks a privilege');
    expect(message).toContain(`npx email-outbox-sql --schema ${schema} --queue email --role app`);
    expect(message).toContain('migrate: false');
    const { rows } = await admin.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    expect(rows).toEqual([]);
  });

  it('migrate: false before the DBA ran the SQL: the boot fails naming the command', async () => {
    const schema = freshSchema();
    const failure = await errorOf(productionApp(sandbox, { connection: appUrl(), schema, migrate: false }));
    expect(failure).toBeInstanceOf(EmailOutboxUnavailableError);
    expect((failure as Error).message).toMatch(/pg-boss is not installed/);
    expect((failure as Error).message).toContain(
      `npx email-outbox-sql --schema ${schema} --queue email --role app`,
    );
  });

  it('migrate: false on the schema the DBA made: committed orders emailed once, rolled-back ones not; the app made nothing', async () => {
    const schema = await dbaSchema();
    const app = await appOnDbaSchema(schema);
    try {
      const written = await writeOrders(app.pool, app.outbox, 'dba', {
        from: 0,
        to: 12,
        rollBack: (i) => i % 4 === 1,
      });
      expect(written.failed).toEqual([]);
      await expectSentOnce(app.outbox, sandbox, written.committed);
      for (const ref of written.rolledBack)
        for (const jobId of jobIdsOf(ref)) expect(await app.outbox.status(jobId)).toBeNull();
      // The DBA's SQL made the index in pg-boss's fetch order; the role owns nothing in the database.
      const indexes = await admin.query('SELECT indexname FROM pg_indexes WHERE schemaname = $1', [schema]);
      expect(
        indexes.rows.map((r) => String(r.indexname)).filter((n) => n.endsWith('_email_fetch')),
      ).toHaveLength(1);
      const owned = await admin.query(
        `SELECT count(*)::int AS n FROM pg_class c JOIN pg_roles r ON r.oid = c.relowner WHERE r.rolname = 'app'`,
      );
      expect(owned.rows).toEqual([{ n: 0 }]);
    } finally {
      await app.close();
    }
  });

  it('migrate: false on a schema behind the pg-boss installed: the boot names the version to migrate from', async () => {
    const schema = await dbaSchema();
    await admin.query(`UPDATE "${schema}".version SET version = version - 1`);
    const { rows } = await admin.query(`SELECT version FROM "${schema}".version`);
    const failure = await errorOf(productionApp(sandbox, { connection: appUrl(), schema, migrate: false }));
    expect(failure).toBeInstanceOf(EmailOutboxUnavailableError);
    expect((failure as Error).message).toMatch(/requires migrations/);
    expect((failure as Error).message).toContain(`--role app --from-version ${String(rows[0].version)}`);
  });
});

describe('a DBA’s timeouts', () => {
  afterEach(async () => {
    await admin.query('ALTER ROLE app RESET ALL');
  });

  it('statement_timeout shorter than a fetch (held up by a lock): a warning that says so, a send refused typed, nothing lost', async () => {
    const schema = await dbaSchema();
    await admin.query(`ALTER ROLE app SET statement_timeout = '300ms'`);
    const app = await appOnDbaSchema(schema, { pollingIntervalMs: 100 });
    const locker = await admin.connect();
    try {
      // Jobs due in a moment; meanwhile a DBA's lock holds every statement on pg-boss's job table past 300 ms.
      const due = await writeOrders(app.pool, app.outbox, 'locked', { from: 0, to: 6 });
      expect(due.failed).toEqual([]);
      await expectSentOnce(app.outbox, sandbox, due.committed);
      const later = Array.from({ length: 4 }, (_, i) => ({
        input: mailOf('later', i),
        options: { jobId: `later-${i}`, delayMs: 1000 },
      }));
      await app.outbox.sendMany(later);
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE "${schema}".job IN ACCESS EXCLUSIVE MODE`);
      await until(
        () => app.logger.entries.some((e) => e.level === 'warn' && /fetch failed/.test(e.message)),
        15_000,
        'the worker’s warning',
      );
      const refused = await errorOf(app.outbox.send(mailOf('refused', 0), { jobId: 'refused' }));
      await locker.query('COMMIT');
      const warning = app.logger.entries.find((e) => e.level === 'warn' && /fetch failed/.test(e.message));
      expect(warning?.message).toContain('57014: statement_timeout');
      expect(refused).toBeInstanceOf(EmailOutboxUnavailableError);
      expect((refused as Error).message).toContain('57014: statement_timeout');
      expect(refused).toMatchObject({ outcome: 'not-sent' });
      // Once the lock is gone: every job written is sent once, the refused one never existed.
      const ids = new Set<string>();
      for (const { options } of later)
        ids.add(String((await app.outbox.waitFor(options.jobId, { timeoutMs: 20_000 })).id));
      expect(ids.size).toBe(later.length);
      expect(await app.outbox.status('refused')).toBeNull();
      expect(sandbox.messages()).toHaveLength(due.committed.flatMap(jobIdsOf).length + later.length);
      await until(() => app.logger.messages.some((m) => /fetching again/.test(m)), 10_000, 'the worker back');
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      locker.release();
      await app.close();
    }
  });

  it('idle_in_transaction_session_timeout: the app’s transaction left idle ends with its email; the worker never idles in one', async () => {
    const schema = await dbaSchema();
    await admin.query(`ALTER ROLE app SET idle_in_transaction_session_timeout = '300ms'`);
    const app = await appOnDbaSchema(schema);
    try {
      const client = await app.pool.connect();
      client.on('error', () => undefined); // the server ends the session: reported on the client
      let ended: unknown;
      try {
        await client.query('BEGIN');
        await client.query('INSERT INTO orders (ref) VALUES ($1)', ['idle-0']);
        await app.outbox.send(mailOf('idle', 0), { tx: client, jobId: 'idle-0' });
        await sleep(1000); // idle in the transaction past the DBA's limit: the server ends the session
        ended = await errorOf(app.outbox.send(mailOf('idle', 1), { tx: client, jobId: 'idle-1' }));
      } finally {
        client.release(true);
      }
      expect(ended).toBeInstanceOf(EmailOutboxUnavailableError);
      // The order and both jobs went with the session; the worker, meanwhile, sends what commits.
      const after = await writeOrders(app.pool, app.outbox, 'after-idle', { from: 0, to: 4 });
      expect(after.failed).toEqual([]);
      await expectSentOnce(app.outbox, sandbox, after.committed);
      expect(await app.outbox.status('idle-0')).toBeNull();
      expect(await app.outbox.status('idle-1')).toBeNull();
      expect((await admin.query(`SELECT 1 FROM orders WHERE ref = 'idle-0'`)).rows).toEqual([]);
    } finally {
      await app.close();
    }
  });
});

describe('max_connections reached', () => {
  it('a new process cannot boot (a clear error naming max_connections); a running one sends on the connections it holds; nothing lost', async () => {
    const schema = await dbaSchema();
    // The running app's outbox on a pool that holds its connections (pg's own default closes one idle for
    // 10 s, which a busy machine can spend filling the server below: then it would hold fewer than it had)
    const held = new pg.Pool({ connectionString: appUrl(), max: 4, idleTimeoutMillis: 0 });
    held.on('error', () => undefined);
    const app = await appOnDbaSchema(schema, { connection: held });
    const hogs: pg.Client[] = [];
    try {
      const first = await writeOrders(app.pool, app.outbox, 'before-full', { from: 0, to: 4 });
      await expectSentOnce(app.outbox, sandbox, first.committed);
      // Every connection the role may still open, taken.
      for (;;) {
        const hog = new pg.Client({ connectionString: appUrl() });
        hog.on('error', () => undefined);
        try {
          await hog.connect();
          hogs.push(hog);
        } catch (err) {
          expect(err).toMatchObject({ code: '53300' });
          break;
        }
      }
      const failure = await errorOf(productionApp(sandbox, { connection: appUrl(), schema, migrate: false }));
      expect(failure).toBeInstanceOf(EmailOutboxUnavailableError);
      expect((failure as Error).message).toContain('53300: max_connections is reached');
      // The running app still writes and sends through the connections its pools hold.
      const meanwhile = await writeOrders(app.pool, app.outbox, 'while-full', {
        from: 0,
        to: 4,
        parallel: 1,
      });
      expect(meanwhile.failed).toEqual([]);
      await expectSentOnce(app.outbox, sandbox, [...first.committed, ...meanwhile.committed]);
    } finally {
      await Promise.all(hogs.map((h) => h.end().catch(() => undefined)));
      await app.close();
      await held.end();
    }
  });
});

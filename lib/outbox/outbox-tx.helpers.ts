import { EmailOutboxTxError } from '../errors/email-outbox.error.js';
import { EmailError } from '../errors/email.error.js';

/** What pg-boss writes through (its `db` option): one SQL text with `$n` parameters, rows back. */
export interface OutboxDb {
  /** `rowCount`: the rows a write changed, where the client tells (pg, Knex on pg). */
  executeSql(
    text: string,
    values?: unknown[],
  ): Promise<{ rows: Array<Record<string, unknown>>; rowCount?: number | null }>;
}

/**
 * The kinds of `tx` `EmailOutbox.send` accepts, as the error for any other kind names them.
 * @publicApi
 */
export const OUTBOX_TX_KINDS = [
  'a pg client (PoolClient or Client) after BEGIN',
  'a TypeORM EntityManager (in manager.transaction) or QueryRunner (after startTransaction)',
  'a MikroORM EntityManager (in em.transactional)',
  'a Knex transaction',
  'a Kysely transaction',
  'a Drizzle transaction (node-postgres or postgres.js)',
  'a Prisma interactive-transaction client (prisma.$transaction(async (tx) => ...))',
] as const;

type Rows = Array<Record<string, unknown>>;
type AnyFn = (...args: never[]) => unknown;
type Loose = Record<string, unknown>;

const isFn = (v: unknown): v is AnyFn => typeof v === 'function';
/** pg treats undefined as NULL; Knex and Prisma refuse it. */
const plain = (values: readonly unknown[] = []): unknown[] => values.map((v) => (v === undefined ? null : v));

/** `$1 ... $n` as `?` placeholders (Knex), with the values in the order they appear. */
function positional(text: string, values: readonly unknown[]): { sql: string; bindings: unknown[] } {
  const bindings: unknown[] = [];
  const sql = text.replace(/\$(\d+)/g, (_, n: string) => {
    bindings.push(values[Number(n) - 1]);
    return '?';
  });
  return { sql, bindings: plain(bindings) };
}

function refuse(what: string): never {
  throw new EmailOutboxTxError(
    `EmailOutbox.send: ${what}. The email is written in the transaction you pass as \`tx\`, so that it is sent ` +
      `only if that transaction commits; nothing was written.`,
  );
}

/** pg (`client.query(text, values)`). */
export function pgDb(client: Loose, checkOpen: boolean): OutboxDb {
  const query = (text: string, values?: unknown[]) =>
    (client.query as (t: string, v?: unknown[]) => Promise<{ rows: Rows }>).call(client, text, values);
  let checked = !checkOpen;
  return {
    async executeSql(text, values) {
      if (!checked) {
        const open = knownOpen(client) ?? (await openByStatement(query));
        if (!open) refuse('tx is a pg client outside a transaction (run BEGIN on it first)');
        checked = true;
      }
      return query(text, plain(values));
    },
  };
}

/**
 * Whether a pg client is inside a transaction block, as the server said in its last ReadyForQuery (pg 8.16 and
 * later tell it, no round trip): only while the client is idle, since a statement still queued on it (a BEGIN
 * or a COMMIT not awaited) is about to change it. Undefined when the client cannot tell. `E`, a transaction
 * that failed, counts as open: the next statement fails and says why.
 */
function knownOpen(client: Loose): boolean | undefined {
  if (client.readyForQuery !== true || !isFn(client.getTransactionStatus)) return undefined;
  const status = (client.getTransactionStatus as () => unknown).call(client);
  return status === 'T' || status === 'E' ? true : status === 'I' ? false : undefined;
}

/** The same asked of the server: inside a block the transaction began before this statement; in autocommit both are now. */
async function openByStatement(query: (text: string) => Promise<{ rows: Rows }>): Promise<boolean> {
  const { rows } = await query('SELECT transaction_timestamp() = statement_timestamp() AS autocommit');
  return rows[0]?.autocommit !== true;
}

/** postgres.js (`sql.unsafe(text, values)`), as Drizzle's postgres-js transaction holds it. */
function postgresJsDb(sql: Loose): OutboxDb {
  return {
    async executeSql(text, values) {
      const rows = await (sql.unsafe as (t: string, v: unknown[]) => Promise<Rows>).call(
        sql,
        text,
        plain(values),
      );
      return { rows: [...rows] };
    },
  };
}

/** Knex (`trx.raw(sql, bindings)` with `?` placeholders); on PostgreSQL it answers pg's result. */
function knexDb(trx: Loose): OutboxDb {
  return {
    async executeSql(text, values) {
      const { sql, bindings } = positional(text, values ?? []);
      const result = (await (
        trx.raw as (s: string, b: unknown[]) => Promise<{ rows?: Rows; rowCount?: number | null }>
      ).call(trx, sql, bindings)) ?? { rows: [] };
      return { rows: result.rows ?? [], rowCount: result.rowCount };
    },
  };
}

/** Kysely (`tx.executeQuery` of a raw compiled query: the text and values go to the driver as they are). */
function kyselyDb(tx: Loose): OutboxDb {
  return {
    async executeSql(text, values) {
      const compiled = {
        sql: text,
        parameters: plain(values),
        query: { kind: 'RawNode', sqlFragments: [text], parameters: [] },
        queryId: { queryId: 'email-outbox' },
      };
      const result = await (tx.executeQuery as (q: unknown) => Promise<{ rows: Rows }>).call(tx, compiled);
      return { rows: result.rows ?? [] };
    },
  };
}

/** Prisma (`tx.$queryRawUnsafe(text, ...values)`, `$n` placeholders; JSON values as text). */
function prismaDb(tx: Loose): OutboxDb {
  return {
    async executeSql(text, values) {
      const args = plain(values).map((v) =>
        v !== null && typeof v === 'object' && !(v instanceof Date) ? JSON.stringify(v) : v,
      );
      const rows = await (tx.$queryRawUnsafe as (t: string, ...v: unknown[]) => Promise<Rows>).call(
        tx,
        text,
        ...args,
      );
      return { rows: Array.isArray(rows) ? rows : [] };
    },
  };
}

/**
 * TypeORM (`queryRunner.query(text, values, true)`): asked for its structured result (`records`, `affected`), since
 * its plain answer to an `UPDATE ... RETURNING` or a `DELETE` is `[rows, rowCount]`, not the rows. A TypeORM that
 * takes no third argument answers plainly: that pair is read as such.
 */
function typeormDb(runner: Loose): OutboxDb {
  return {
    async executeSql(text, values) {
      const answer = await (runner.query as (t: string, v: unknown[], s: boolean) => Promise<unknown>).call(
        runner,
        text,
        plain(values),
        true,
      );
      if (answer !== null && typeof answer === 'object' && !Array.isArray(answer)) {
        const { records, affected } = answer as { records?: unknown; affected?: unknown };
        return {
          rows: Array.isArray(records) ? (records as Rows) : [],
          ...(typeof affected === 'number' ? { rowCount: affected } : {}),
        };
      }
      if (!Array.isArray(answer)) return { rows: [] };
      // [rows, rowCount]: rows are objects, never arrays, so a first element that is an array is this pair
      if (answer.length === 2 && Array.isArray(answer[0]) && typeof answer[1] === 'number')
        return { rows: answer[0] as Rows, rowCount: answer[1] };
      return { rows: answer as Rows };
    },
  };
}

/**
 * The writer for the transaction the app holds, whatever form it takes (see `OUTBOX_TX_KINDS`).
 * @throws EmailOutboxTxError for an unknown kind (naming the kinds accepted) or one outside a transaction.
 */
export function outboxDbOf(tx: unknown): { kind: string; db: OutboxDb } {
  if ((typeof tx !== 'object' && typeof tx !== 'function') || tx === null) return unknownTx(tx);
  const t = tx as Loose;
  // Prisma: the interactive-transaction client has the raw methods but not $transaction.
  if (isFn(t.$queryRawUnsafe)) {
    if (isFn(t.$transaction))
      refuse('tx is the PrismaClient itself; pass the `tx` of prisma.$transaction(async (tx) => ...)');
    return { kind: 'prisma', db: prismaDb(t) };
  }
  // Kysely: Kysely and Transaction both execute; only a Transaction says isTransaction.
  if (isFn(t.executeQuery) && 'isTransaction' in t) {
    if (t.isTransaction !== true)
      refuse('tx is a Kysely instance, not a transaction (db.transaction().execute(async (trx) => ...))');
    return { kind: 'kysely', db: kyselyDb(t) };
  }
  // Knex: the transaction is a function with raw() and isTransaction.
  if (isFn(t.raw) && (isFn(t.commit) || 'isTransaction' in t || (isFn(t.transaction) && 'client' in t))) {
    if (t.isTransaction !== true)
      refuse('tx is a Knex instance, not a transaction (knex.transaction(async (trx) => ...))');
    return { kind: 'knex', db: knexDb(t) };
  }
  // MikroORM: its EntityManager holds the transaction context (a Knex transaction in v6, Kysely in v7).
  if (isFn(t.getTransactionContext) && isFn(t.getConnection)) {
    const ctx = (t.getTransactionContext as () => unknown).call(t);
    if (ctx === undefined || ctx === null)
      refuse('tx is a MikroORM EntityManager outside a transaction (em.transactional(async (em) => ...))');
    const inner = outboxDbOf(ctx);
    return { kind: `mikro-orm (${inner.kind})`, db: inner.db };
  }
  // TypeORM QueryRunner.
  if (isFn(t.query) && isFn(t.startTransaction) && 'isTransactionActive' in t) {
    if (t.isTransactionActive !== true)
      refuse(
        'tx is a TypeORM QueryRunner without an open transaction (await queryRunner.startTransaction() first)',
      );
    return { kind: 'typeorm', db: typeormDb(t) };
  }
  // TypeORM EntityManager: the one a transaction gives holds its QueryRunner.
  if (isFn(t.query) && isFn(t.transaction) && ('connection' in t || 'dataSource' in t)) {
    const runner = t.queryRunner as Loose | undefined;
    if (!runner || runner.isTransactionActive !== true)
      refuse(
        'tx is a TypeORM EntityManager outside a transaction (dataSource.transaction(async (manager) => ...))',
      );
    return { kind: 'typeorm', db: typeormDb(runner as Loose) };
  }
  // Drizzle: a transaction has rollback() and its session's driver client.
  if (isFn(t.rollback) && isFn(t.execute) && typeof t.session === 'object' && t.session !== null) {
    const client = (t.session as Loose).client as Loose | undefined;
    if (client && isFn(client.query)) return { kind: 'drizzle (node-postgres)', db: pgDb(client, false) };
    if (client && isFn(client.unsafe)) return { kind: 'drizzle (postgres.js)', db: postgresJsDb(client) };
    return unknownTx(tx);
  }
  // pg: a Pool runs each query on any client, never in one transaction.
  if (isFn(t.query) && ('totalCount' in t || 'idleCount' in t))
    refuse('tx is a pg Pool; pass the client you ran BEGIN on (const client = await pool.connect())');
  if (isFn(t.query) && (isFn(t.release) || isFn(t.connect))) return { kind: 'pg', db: pgDb(t, true) };
  return unknownTx(tx);
}

function unknownTx(tx: unknown): never {
  const what =
    tx === null
      ? 'null'
      : typeof tx === 'object'
        ? ((tx as object).constructor?.name ?? 'an object')
        : typeof tx;
  throw new EmailOutboxTxError(
    `EmailOutbox.send: tx (${what}) is not a transaction the outbox knows. Pass one of: ${OUTBOX_TX_KINDS.join('; ')}. ` +
      "Or leave tx out to write in a transaction of the outbox's own. Nothing was written.",
  );
}

/** A client as a pg Pool hands it out (`PoolClient`): what `holdPoolClient` needs of it. */
export interface PoolClientLike {
  query(text: string, values?: unknown[]): Promise<unknown>;
  release(err?: Error): void;
  on(event: 'error', listener: (err: Error) => void): unknown;
  removeListener(event: 'error', listener: (err: Error) => void): unknown;
}

/**
 * Takes a client from `pool` for a few statements in a row. pg-pool takes its own `error` listener off a client
 * it hands out, and pg emits `error` on a client whose connection drops (a database restarted or failed over),
 * even while a statement runs on it (that statement fails with the same error): with no listener, that ends
 * the process. The client keeps one until `release`, which hands the pool back a client whose connection was
 * lost (or whose work failed, `err`) as such, so that it is not used again.
 */
export async function holdPoolClient<C extends PoolClientLike>(pool: {
  connect(): Promise<C>;
}): Promise<{ client: C; release(err?: unknown): void }> {
  const client = await pool.connect();
  let lost: Error | undefined;
  const onLost = (err: Error) => {
    lost ??= err;
  };
  client.on('error', onLost);
  return {
    client,
    release(err) {
      client.removeListener('error', onLost);
      client.release(((err as Error | undefined) ?? lost) || undefined);
    },
  };
}

/**
 * Runs `write` in a transaction of its own on a client of `pool` (a send without `tx`). A failure to connect,
 * or of a statement, becomes `unavailable(message, cause, committing)`: `committing` when it failed at
 * `COMMIT`, where the write may have landed. Our own `EmailError`s pass as they are.
 */
export async function inPoolTransaction<T>(
  pool: { connect(): Promise<PoolClientLike> },
  write: (db: OutboxDb) => Promise<T>,
  unavailable: (what: string, cause: unknown, committing: boolean) => Error,
): Promise<T> {
  let held: Awaited<ReturnType<typeof holdPoolClient>>;
  try {
    held = await holdPoolClient(pool);
  } catch (err) {
    throw unavailable(`no connection: ${(err as Error)?.message ?? String(err)}`, err, false);
  }
  const { client } = held;
  let committing = false;
  try {
    await client.query('BEGIN');
    const result = await write(pgDb(client as unknown as Loose, false));
    committing = true;
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    if (err instanceof EmailError) throw err;
    throw unavailable((err as Error).message, err, committing);
  } finally {
    held.release();
  }
}

// Each tx kind EmailOutbox.send accepts, on its real package over real PostgreSQL: a committed transaction
// sends, a rolled-back one writes nothing. Prisma cannot install here (its engines download at install and
// generate time; see docs/outbox.md): its interactive-transaction client's shape is checked over a real pg
// transaction instead.
import { sql as drizzleSql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import knexFactory from 'knex';
import { Kysely, PostgresDialect, sql as kyselySql } from 'kysely';
import { EntitySchema, MikroORM } from '@mikro-orm/postgresql';
import { DataSource } from 'typeorm';
import { inTransaction, mail, outboxApp, posts, settle, useOutboxWorld } from './outbox.support.js';

const world = useOutboxWorld();
let app: Awaited<ReturnType<typeof outboxApp>>;
beforeAll(async () => {
  app = await outboxApp(world.sandbox, { connection: world.postgres.url, concurrency: 4 });
}, 30_000);
afterAll(() => app?.close());

class Rollback extends Error {}

/** Runs one commit and one rollback through `run` (which enqueues in the ORM's transaction, and throws `Rollback` to roll back). */
async function commitsAndRollsBack(kind: string, run: (jobId: string, rollback: boolean) => Promise<void>) {
  await run(`${kind}:commit`, false);
  await expect(run(`${kind}:rollback`, true)).rejects.toBeInstanceOf(Rollback);
  const record = await app.outbox.waitFor(`${kind}:commit`, { timeoutMs: 15_000 });
  expect(record.subject).toBe(`Order ${kind}:commit`);
  await settle(1000);
  expect(await app.outbox.status(`${kind}:rollback`)).toBeNull();
  const { rows } = await world.pool.query('SELECT ref FROM orders WHERE ref LIKE $1 ORDER BY ref', [
    `${kind}:%`,
  ]);
  expect(rows.map((r: { ref: string }) => r.ref)).toEqual([`${kind}:commit`]);
  expect(world.sandbox.messages().filter((m) => m.subject.startsWith(`Order ${kind}:`))).toHaveLength(1);
  expect(posts(world.sandbox)).toHaveLength(1);
}

describe('EmailOutbox.send({ tx }) on each ORM (real PostgreSQL)', () => {
  it('TypeORM EntityManager (dataSource.transaction) and QueryRunner', async () => {
    const ds = new DataSource({ type: 'postgres', url: world.postgres.url, entities: [] });
    await ds.initialize();
    try {
      await commitsAndRollsBack('typeorm-manager', (jobId, rollback) =>
        ds.transaction(async (manager) => {
          await manager.query('INSERT INTO orders (ref) VALUES ($1)', [jobId]);
          await app.outbox.send(mail(`Order ${jobId}`), { tx: manager, jobId });
          if (rollback) throw new Rollback();
        }),
      );
      world.sandbox.reset();
      await commitsAndRollsBack('typeorm-runner', async (jobId, rollback) => {
        const qr = ds.createQueryRunner();
        await qr.connect();
        await qr.startTransaction();
        try {
          await qr.query('INSERT INTO orders (ref) VALUES ($1)', [jobId]);
          await app.outbox.send(mail(`Order ${jobId}`), { tx: qr, jobId });
          if (rollback) throw new Rollback();
          await qr.commitTransaction();
        } catch (err) {
          await qr.rollbackTransaction();
          throw err;
        } finally {
          await qr.release();
        }
      });
      await expect(app.outbox.send(mail(), { tx: ds.manager })).rejects.toThrow(
        /TypeORM EntityManager outside a transaction/,
      );
    } finally {
      await ds.destroy();
    }
  }, 60_000);

  it('MikroORM EntityManager (em.transactional)', async () => {
    const Order = new EntitySchema({
      name: 'Order',
      tableName: 'orders',
      properties: { id: { type: 'number', primary: true }, ref: { type: 'string' } },
    });
    const orm = await MikroORM.init({ clientUrl: world.postgres.url, entities: [Order], debug: false });
    try {
      await commitsAndRollsBack('mikro', (jobId, rollback) =>
        orm.em.fork().transactional(async (em) => {
          await em.execute('INSERT INTO orders (ref) VALUES (?)', [jobId]);
          await app.outbox.send(mail(`Order ${jobId}`), { tx: em, jobId });
          if (rollback) throw new Rollback();
        }),
      );
      await expect(app.outbox.send(mail(), { tx: orm.em.fork() })).rejects.toThrow(
        /MikroORM EntityManager outside/,
      );
    } finally {
      await orm.close(true);
    }
  }, 60_000);

  it('Knex transaction', async () => {
    const knex = knexFactory({ client: 'pg', connection: world.postgres.url, pool: { min: 0, max: 2 } });
    try {
      await commitsAndRollsBack('knex', (jobId, rollback) =>
        knex.transaction(async (trx) => {
          await trx('orders').insert({ ref: jobId });
          await app.outbox.send(mail(`Order ${jobId}`), { tx: trx, jobId });
          if (rollback) throw new Rollback();
        }),
      );
      await expect(app.outbox.send(mail(), { tx: knex })).rejects.toThrow(/Knex instance, not a transaction/);
      // A sendMany (one statement for its records, one for its pg-boss jobs), then a reschedule and a cancel in a trx.
      const ids = ['knex:many-1', 'knex:many-2', 'knex:many-3'];
      await knex.transaction((trx) =>
        app.outbox.sendMany(
          ids.map((jobId) => ({ input: mail(`Order ${jobId}`), options: { jobId } })),
          { tx: trx },
        ),
      );
      for (const jobId of ids)
        expect((await app.outbox.waitFor(jobId, { timeoutMs: 15_000 })).subject).toBe(`Order ${jobId}`);
      await app.outbox.send(mail('Order knex:later'), { jobId: 'knex:later', delayMs: 60_000 });
      const moved = await knex.transaction((trx) =>
        app.outbox.reschedule('knex:later', { delayMs: 50_000 }, { tx: trx }),
      );
      expect(moved).toEqual({ rescheduled: true });
      const cancelled = await knex.transaction((trx) => app.outbox.cancel('knex:later', { tx: trx }));
      expect(cancelled).toEqual({ cancelled: true });
      expect((await app.outbox.status('knex:later'))?.state).toBe('cancelled');
    } finally {
      await knex.destroy();
    }
  }, 60_000);

  it('Kysely transaction', async () => {
    const { Pool } = (await import('pg')).default;
    const db = new Kysely<{ orders: { id: number; ref: string } }>({
      dialect: new PostgresDialect({ pool: new Pool({ connectionString: world.postgres.url, max: 2 }) }),
    });
    try {
      await commitsAndRollsBack('kysely', (jobId, rollback) =>
        db.transaction().execute(async (trx) => {
          await kyselySql`INSERT INTO orders (ref) VALUES (${jobId})`.execute(trx);
          await app.outbox.send(mail(`Order ${jobId}`), { tx: trx, jobId });
          if (rollback) throw new Rollback();
        }),
      );
      await expect(app.outbox.send(mail(), { tx: db })).rejects.toThrow(/Kysely instance, not a transaction/);
    } finally {
      await db.destroy();
    }
  }, 60_000);

  it('Drizzle transaction (node-postgres)', async () => {
    const { Pool } = (await import('pg')).default;
    const pool = new Pool({ connectionString: world.postgres.url, max: 2 });
    const db = drizzle(pool);
    try {
      await commitsAndRollsBack('drizzle', (jobId, rollback) =>
        db.transaction(async (tx) => {
          await tx.execute(drizzleSql`INSERT INTO orders (ref) VALUES (${jobId})`);
          await app.outbox.send(mail(`Order ${jobId}`), { tx, jobId });
          if (rollback) throw new Rollback();
        }),
      );
    } finally {
      await pool.end();
    }
  }, 60_000);

  it('Prisma interactive-transaction client shape ($queryRawUnsafe), over a real pg transaction', async () => {
    await commitsAndRollsBack('prisma', (jobId, rollback) =>
      inTransaction(world.pool, async (client) => {
        // What prisma.$transaction(async (tx) => ...) hands over: raw methods, no $transaction.
        const tx = {
          $queryRawUnsafe: async (text: string, ...values: unknown[]) =>
            (await client.query(text, values)).rows,
          $executeRawUnsafe: async (text: string, ...values: unknown[]) =>
            (await client.query(text, values)).rowCount,
        };
        await tx.$executeRawUnsafe('INSERT INTO orders (ref) VALUES ($1)', jobId);
        await app.outbox.send(mail(`Order ${jobId}`), { tx, jobId });
        if (rollback) throw new Rollback();
      }),
    );
    const prismaClient = { $queryRawUnsafe: async () => [], $transaction: async () => undefined };
    await expect(app.outbox.send(mail(), { tx: prismaClient })).rejects.toThrow(/PrismaClient itself/);
  }, 60_000);
});

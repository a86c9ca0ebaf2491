import { randomUUID } from 'node:crypto';
import { EmailSuppressedError, EmailSuppressions } from '../../lib/index.js';
import { EmailOutbox, EmailOutboxModule } from '../../lib/outbox/index.js';
import { FAST, freshSchema, inTransaction, useOutboxWorld, workerLooked } from '../outbox/outbox.support.js';
import { emailApp } from '../support/email-app.js';
import { requestedOf } from './support/shared-list.js';

// The gate in front of the outbox (pg-boss), the list in the same PostgreSQL (`suppression.postgres`, the
// app's pool): a job to a suppressed address is refused in the app's transaction before anything is written
// (the order commits, no email); a job committed before its address was suppressed ends at its next attempt
// without a request; a rolled-back one sends nothing either way. Faults are on; the sandbox's request log
// never names a suppressed address.

const world = useOutboxWorld();
const mail = (to: string) => ({ from: 'shop@example.com', to: [to], subject: `For ${to}`, text: 'Hello' });
const requested = (): string => requestedOf(world.sandbox);

async function app() {
  const built = await emailApp({
    sandbox: world.sandbox,
    timeoutMs: 3000,
    suppression: {
      postgres: world.pool as never,
      schema: `sup_${randomUUID().replaceAll('-', '').slice(0, 10)}`,
    },
    imports: [EmailOutboxModule.forRoot({ connection: world.postgres.url, schema: freshSchema(), ...FAST })],
  });
  return {
    ...built,
    outbox: built.moduleRef.get(EmailOutbox),
    suppressions: built.moduleRef.get(EmailSuppressions),
  };
}

describe('the suppression gate and the outbox', () => {
  let a: Awaited<ReturnType<typeof app>>;
  beforeAll(async () => {
    a = await app();
  }, 30_000);
  afterAll(() => a?.close());

  it('refuses a job to a suppressed address in the transaction, before anything is written; the order commits', async () => {
    await a.suppressions.add('gone@example.com', { reason: 'bounced' });
    const ref = `order-${randomUUID()}`;
    const err = await inTransaction(world.pool, async (client) => {
      await client.query('INSERT INTO orders (ref) VALUES ($1)', [ref]);
      return a.outbox
        .send(mail('gone@example.com'), { tx: client, jobId: `${ref}:mail` })
        .catch((e: unknown) => e);
    });
    expect(err).toBeInstanceOf(EmailSuppressedError);
    expect((await world.pool.query('SELECT 1 FROM orders WHERE ref = $1', [ref])).rowCount).toBe(1);
    await workerLooked(a.moduleRef);
    expect(await a.outbox.status(`${ref}:mail`)).toBeNull();
    expect(requested()).not.toContain('gone@example.com');
  }, 30_000);

  it('ends a committed job whose address was suppressed after the commit, without a request; a rolled-back one sends nothing', async () => {
    const committed = await inTransaction(world.pool, (client) =>
      a.outbox.send(mail('soon@example.com'), { tx: client, jobId: `c-${randomUUID()}`, delayMs: 1500 }),
    );
    const client = await world.pool.connect();
    const rolledBack = `r-${randomUUID()}`;
    try {
      await client.query('BEGIN');
      await a.outbox.send(mail('soon@example.com'), { tx: client, jobId: rolledBack });
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
    await a.suppressions.add('soon@example.com', { reason: 'complained' });
    const err = await a.outbox.waitFor(committed.jobId, { timeoutMs: 20_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EmailSuppressedError);
    expect(await a.outbox.status(committed.jobId)).toMatchObject({
      state: 'failed',
      attempts: 1,
      error: { name: 'EmailSuppressedError', outcome: 'not-sent' },
    });
    expect(await a.outbox.status(rolledBack)).toBeNull();
    expect(requested()).not.toContain('soon@example.com');
  }, 30_000);

  it('through random faults, every committed job to an address not suppressed is sent once, the others never reach the service', async () => {
    world.sandbox.faults.random({
      probability: 0.3,
      seed: 7,
      modes: ['drop-after', { mode: 'status', status: 503 }],
    });
    try {
      const addresses = Array.from({ length: 20 }, (_, i) => `p${i}-${randomUUID().slice(0, 6)}@example.com`);
      const gone = addresses.filter((_, i) => i % 4 === 0);
      const jobs = await inTransaction(world.pool, (client) =>
        a.outbox.sendMany(
          addresses.map((to) => ({ input: mail(to), options: { jobId: `f-${to}`, delayMs: 1500 } })),
          { tx: client },
        ),
      );
      await a.suppressions.add(gone, { reason: 'bounced' });
      const ends = await Promise.all(
        jobs.map((j) =>
          a.outbox.waitFor(j.jobId, { timeoutMs: 60_000 }).then(
            () => 'sent',
            (e: Error) => e.name,
          ),
        ),
      );
      expect(ends.filter((e) => e === 'EmailSuppressedError')).toHaveLength(gone.length);
      expect(ends.filter((e) => e === 'sent')).toHaveLength(addresses.length - gone.length);
      world.sandbox.faults.random(null);
      const delivered = world.sandbox.messages().flatMap((m) => m.toAddresses);
      expect(delivered.filter((d) => addresses.includes(d)).sort()).toEqual(
        addresses.filter((x) => !gone.includes(x)).sort(),
      );
      for (const g of gone) expect(requested()).not.toContain(g);
    } finally {
      world.sandbox.faults.random(null);
    }
  }, 90_000);
});

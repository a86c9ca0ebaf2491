import { randomUUID } from 'node:crypto';
import { EmailSuppressedError, EmailSuppressions, type EmailSuppressionOptions } from '../../lib/index.js';
import { useOutboxWorld } from '../outbox/outbox.support.js';
import { emailApp } from '../support/email-app.js';
import { until } from '../support/worker-process.js';
import { startListProcess } from './support/list-process.js';
import {
  keepsLastKnown,
  letsThroughAgain,
  mailFrom,
  sharesOneList,
  type SharedList,
} from './support/shared-list.js';

// The list in the app's PostgreSQL (for apps on the outbox), shared by this process and a child process:
// an add in one reaches the other's local copy through LISTEN (no round trip per send); a PostgreSQL that
// stops answering is handled as `whenStoreDown` says; `hashAddresses` leaves no address in the tables.

const world = useOutboxWorld();
beforeEach(() => world.sandbox.reset());
const mail = mailFrom('shop@example.com');
const schema = (): string => `sup_${randomUUID().replaceAll('-', '').slice(0, 10)}`;

async function app(suppression: EmailSuppressionOptions) {
  const built = await emailApp({ sandbox: world.sandbox, suppression });
  return {
    ...built,
    suppressions: built.moduleRef.get(EmailSuppressions),
    gate: built.moduleRef.get(EmailSuppressions).gate,
  };
}

/** This process (with `own` options, else the child's) and a child on one list, for a scenario of `shared-list.ts`. */
async function onOneList(
  options: EmailSuppressionOptions,
  scenario: (shared: SharedList) => Promise<void>,
  own: EmailSuppressionOptions = options,
) {
  const here = await app(own);
  const other = await startListProcess(world.sandbox, options, 'shop@example.com');
  const pg = world.postgres;
  try {
    await scenario({
      here,
      other,
      mailbox: world.sandbox,
      mail,
      freeze: () => pg.pause(),
      thaw: () => pg.resume(),
    });
  } finally {
    await here.close();
    await other.close();
  }
}

describe('the suppression list in PostgreSQL', () => {
  it('two processes share one list: an add in one is refused by the other from its local copy', async () => {
    const s = schema();
    // this process on the app's pool, the other on a connection string
    await onOneList({ postgres: world.postgres.url, schema: s }, sharesOneList, {
      postgres: world.pool as never,
      schema: s,
    });
  }, 60_000);

  it('learns into the account that read the record, and lists page with a cursor', async () => {
    const here = await app({ postgres: world.pool as never, schema: schema() });
    try {
      world.sandbox.bounce('b1@example.com');
      world.sandbox.complain('b2@example.com');
      await here.email.sendBatch([mail(['b1@example.com']), mail(['b2@example.com', 'ok@example.com'])]);
      await here.email.list();
      await until(async () => (await here.suppressions.list()).entries.length === 3, 20_000, 'learning');
      const first = await here.suppressions.list({ limit: 2 });
      expect(first.entries.map((e) => [e.address, e.reason])).toEqual([
        ['b1@example.com', 'bounced'],
        ['b2@example.com', 'complained'],
      ]);
      const second = await here.suppressions.list({ limit: 2, after: first.next });
      // A record with several recipients does not say which one complained: all of them are suppressed.
      expect(second).toEqual({
        entries: [expect.objectContaining({ address: 'ok@example.com', reason: 'complained' })],
      });
      expect(await here.suppressions.list({ account: 'another' })).toEqual({ entries: [] });
    } finally {
      await here.close();
    }
  });

  it('remove and an ended entry let an address through again', async () => {
    const here = await app({ postgres: world.pool as never, schema: schema() });
    try {
      await letsThroughAgain({ here, mail });
    } finally {
      await here.close();
    }
  });

  it('with hashAddresses, the tables hold no address', async () => {
    const s = schema();
    const here = await app({
      postgres: world.postgres.url,
      schema: s,
      hashAddresses: { secret: 'sixteen characters at least' },
    });
    try {
      await here.suppressions.add(['Private.Person@Example.org', 'x@example.org'], { reason: 'bounced' });
      await here.suppressions.remove('x@example.org');
      await expect(here.email.send(mail(['private.person@example.org']))).rejects.toBeInstanceOf(
        EmailSuppressedError,
      );
      const tables = ['email_suppression', 'email_suppression_change', 'email_suppression_state'];
      const dump = await Promise.all(tables.map((t) => world.pool.query(`SELECT * FROM "${s}".${t}`)));
      expect(JSON.stringify(dump.map((d) => d.rows)).toLowerCase()).not.toMatch(/person|example|@/);
    } finally {
      await here.close();
    }
  });

  it('a PostgreSQL that stops answering: sends go on from the last-known list, and an add is written once it answers', async () => {
    await onOneList(
      { postgres: world.postgres.url, schema: schema(), commandTimeoutMs: 500 },
      keepsLastKnown,
    );
  }, 60_000);
});

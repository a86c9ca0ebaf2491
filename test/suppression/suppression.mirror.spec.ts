import { randomUUID } from 'node:crypto';
import { PostgresSuppressionStore } from '../../lib/suppression/postgres-suppression.store.js';
import { RedisSuppressionStore } from '../../lib/suppression/redis-suppression.store.js';
import { SuppressionMirror } from '../../lib/suppression/suppression-mirror.store.js';
import type {
  StoreWatcher,
  SuppressionChange,
  SuppressionStore,
} from '../../lib/suppression/suppression-store.interface.js';
import { fingerprintNormalized, FP_HI, FP_LO } from '../../lib/suppression/suppression-address.helpers.js';
import { startPostgres, type TestPostgres } from '../support/postgres-server.mjs';
import { startRedis, type TestRedis } from '../support/redis-server.mjs';
import { until } from '../support/worker-process.js';

// The local copy when it cannot trust what it heard: a notification after a gap (missed ones) makes it
// read the versions it missed from the store's change log; a log that no longer holds them makes it read
// everything again. The store is real (Redis, PostgreSQL); only its notifications are taken away, so that
// the spec decides what the copy hears.

/** A real store whose notifications this spec delivers by hand; `forget` makes its change log lose what a copy missed. */
class Deaf implements SuppressionStore {
  watcher?: StoreWatcher;
  forget = false;
  constructor(private readonly inner: SuppressionStore) {}
  get kind() {
    return this.inner.kind;
  }
  get connected() {
    return this.inner.connected;
  }
  open = () => this.inner.open();
  write: SuppressionStore['write'] = (ops, now) => this.inner.write(ops, now);
  read: SuppressionStore['read'] = (fields) => this.inner.read(fields);
  page: SuppressionStore['page'] = (...a) => this.inner.page(...a);
  snapshot: SuppressionStore['snapshot'] = (each) => this.inner.snapshot(each);
  changesSince = (version: number): Promise<SuppressionChange[] | null> =>
    this.forget ? Promise.resolve(null) : this.inner.changesSince(version);
  watch = (watcher: StoreWatcher): Promise<boolean> => {
    this.watcher = watcher;
    return Promise.resolve(true);
  };
  ping = () => this.inner.ping();
  claim: SuppressionStore['claim'] = (...a) => this.inner.claim(...a);
  close = () => this.inner.close();
}

const events = { trust: () => undefined, overflow: () => undefined, trouble: () => undefined };
const entry = { code: 1, since: 1, time: 0 };
const holds = (mirror: SuppressionMirror, address: string): boolean => {
  fingerprintNormalized(address, mirror.seedOf('m'));
  return mirror.set.find(FP_HI, FP_LO) >= 0;
};

let redis: TestRedis;
let postgres: TestPostgres;
beforeAll(async () => {
  [redis, postgres] = await Promise.all([startRedis(), startPostgres()]);
}, 60_000);
afterAll(async () => {
  await Promise.all([redis?.stop(), postgres?.stop()]);
});

/** Two stores on one list (the writer's and the copy's), each with its own connections. */
const stores: Array<[string, () => [SuppressionStore, SuppressionStore]]> = [
  [
    'Redis',
    () => {
      const prefix = `mirror-${randomUUID()}`;
      return [
        new RedisSuppressionStore(redis.url, prefix, 2000),
        new RedisSuppressionStore(redis.url, prefix, 2000),
      ];
    },
  ],
  [
    'PostgreSQL',
    () => {
      const schema = `m_${randomUUID().replaceAll('-', '').slice(0, 8)}`;
      return [
        new PostgresSuppressionStore(postgres.url, schema, 2000),
        new PostgresSuppressionStore(postgres.url, schema, 2000),
      ];
    },
  ],
];

/** A writer and a started copy that hears only what the test delivers, on one list; all closed after `run`. */
async function withDeafCopy(
  makeStores: () => [SuppressionStore, SuppressionStore],
  run: (parts: { writer: SuppressionStore; deaf: Deaf; mirror: SuppressionMirror }) => Promise<void>,
): Promise<void> {
  const [writer, own] = makeStores();
  const deaf = new Deaf(own);
  await Promise.all([writer.open(), deaf.open()]);
  const mirror = new SuppressionMirror(deaf, undefined, 100, events, 2000);
  try {
    await mirror.start();
    await run({ writer, deaf, mirror });
  } finally {
    mirror.close();
    await Promise.all([writer.close(), deaf.close()]);
  }
}

describe.each(stores)('the local copy over %s', (_, makeStores) => {
  it('a notification after a gap makes it read every version it missed, in order', async () => {
    await withDeafCopy(makeStores, async ({ writer, deaf, mirror }) => {
      const versions: number[] = [];
      for (const a of ['one@example.com', 'two@example.com', 'three@example.com'])
        versions.push((await writer.write([{ field: `m\n${a}`, entry }], Date.now())).version);
      expect(holds(mirror, 'one@example.com')).toBe(false); // it heard nothing
      const last = (await writer.changesSince(versions[1]))!;
      deaf.watcher!.changes(last); // only the last notification arrives
      await until(() => mirror.version === versions[2], 10_000, 'the catch-up');
      for (const a of ['one@example.com', 'two@example.com', 'three@example.com'])
        expect(holds(mirror, a)).toBe(true);
    });
  });

  it('a change log that no longer holds what it missed makes it read everything again', async () => {
    await withDeafCopy(makeStores, async ({ writer, deaf, mirror }) => {
      const { version } = await writer.write(
        [
          { field: `m\nfour@example.com`, entry },
          { field: `m\nfive@example.com`, entry: { code: 0, since: 2, time: 2 } },
        ],
        Date.now(),
      );
      deaf.forget = true;
      deaf.watcher!.behind();
      await until(() => mirror.version === version, 10_000, 'the reload');
      expect(holds(mirror, 'four@example.com')).toBe(true);
      fingerprintNormalized('five@example.com', mirror.seedOf('m'));
      expect(mirror.set.codeAt(mirror.set.find(FP_HI, FP_LO))).toBe(0); // a removal, kept as such
    });
  });
});

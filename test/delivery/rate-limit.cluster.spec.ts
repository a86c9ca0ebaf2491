import { Cluster, Redis } from 'ioredis';
import { EmailOptionsError, type EmailModuleOptions } from '../../lib/index.js';
import { keySlot } from '../../lib/peers/redis-cluster.helpers.js';
import { emailApp } from '../support/email-app.js';
import { LATE_429S } from '../support/late-429s.js';
import { redisCli, startRedisCluster, type TestRedisCluster } from '../support/redis-cluster.mjs';
import { useSandbox } from '../support/sandbox.js';
import { runSendersTogether, type SenderTally } from './support/rate-processes.js';

// The shared rate limit on a real Redis Cluster (3 masters, 3 replicas), started once for the file:
// the budget shared by processes, the 429 pause shared by instances, a master lost mid-run. The last
// test kills a master, so it runs last.

const QUOTA = { recipients: 30, windowMs: 1000 };
const mail = (i: number, tag: string) => ({
  from: 'shop@example.com',
  to: ['user@example.org'],
  subject: 'Notice',
  text: `${tag}-${i}`,
});

let cluster: TestRedisCluster;
const sandbox = useSandbox({ quota: QUOTA, maxRequestLog: 5000, reset: true });

beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

/** The boot error of an EmailModule with these options (undefined when it boots). */
async function bootError(options: Partial<EmailModuleOptions>): Promise<EmailOptionsError | undefined> {
  try {
    const app = await emailApp({ baseUrl: 'http://127.0.0.1:1', ...options });
    await app.close();
    return undefined;
  } catch (err) {
    if (err instanceof EmailOptionsError) return err;
    throw err;
  }
}

const total = (tallies: SenderTally[], field: keyof SenderTally) =>
  tallies.reduce((sum, t) => sum + t[field], 0);

describe('rateLimit.redis on a Redis Cluster: the option', () => {
  it('refuses a prefix without a hash tag, saying why, and nodes that are not nodes', async () => {
    const err = await bootError({
      rateLimit: {
        recipients: { limit: 5, intervalMs: 1000 },
        redis: { cluster: cluster.nodes },
        prefix: 'shop-rate',
      },
    });
    expect(err?.problems).toEqual([
      'rateLimit.prefix "shop-rate" has no hash tag: on a Redis Cluster every key it starts must live on ' +
        'one slot, which only a tag in braces gives (use e.g. "{shop-rate}")',
    ]);
    const nodes = await bootError({
      rateLimit: {
        recipients: { limit: 5, intervalMs: 1000 },
        redis: { cluster: [{ host: '127.0.0.1', port: 70000 }, 'redis://:hunter2@h:1' as never] },
      },
    });
    expect(nodes?.problems).toEqual([
      'rateLimit.redis.cluster[0] must be a node { host, port } with a port from 1 to 65535 (got an object)',
      'rateLimit.redis.cluster[1] must be a node { host, port } with a port from 1 to 65535 (got a string with credentials)',
    ]);
    expect(nodes?.message).not.toContain('hunter2');
    const empty = await bootError({
      rateLimit: { recipients: { limit: 5, intervalMs: 1000 }, redis: { cluster: [] } },
    });
    expect(empty?.problems).toEqual([
      'rateLimit.redis.cluster must be a non-empty array of nodes { host, port } (got an array of 0)',
    ]);
  });

  it('fails the boot, naming the option, when no node of the cluster answers', async () => {
    const err = await bootError({
      rateLimit: {
        recipients: { limit: 5, intervalMs: 1000 },
        redis: { cluster: [{ host: '127.0.0.1', port: 1 }], redisOptions: { password: 'hunter2' } },
      },
    });
    expect(err?.message).toContain('rateLimit.redis: cannot reach Redis');
    expect(err?.message).not.toContain('hunter2');
  });
});

describe('rateLimit.redis on a Redis Cluster: shared', () => {
  it('two processes on { cluster: nodes } share one budget: no 429, every email goes, keys on one slot', async () => {
    const prefix = '{spec-procs}';
    const rateLimit = {
      recipients: { limit: QUOTA.recipients, intervalMs: QUOTA.windowMs },
      requests: { limit: 1000, intervalMs: 1000 },
      redis: { cluster: cluster.nodes },
      prefix,
    };
    const perProcess = 40; // 1 to 3 recipients each: about 160 recipients in all, 5 windows or more
    const tallies = await runSendersTogether(
      [0, 1].map((p) => ({
        EMAIL_BASE_URL: sandbox.baseUrl,
        EMAIL_API_KEY: sandbox.apiKey,
        COUNT: String(perProcess),
        CONCURRENCY: '6',
        TAG: `c${p}`,
        TIMEOUT_MS: '60000',
        RATE_LIMIT: JSON.stringify(rateLimit),
      })),
    );
    // two processes each spending the whole budget would draw dozens
    expect(sandbox.limited().quota).toBeLessThanOrEqual(LATE_429S);
    expect(total(tallies, 'sent')).toBe(2 * perProcess);
    expect(sandbox.messages()).toHaveLength(2 * perProcess);
    // both budgets' keys hash to the tag's slot, and they are on the master that owns it
    const keys = [`${prefix}:requests:all`, `${prefix}:recipients:all`];
    const owner = await cluster.masterOf(prefix);
    for (const key of keys) {
      expect(Number(await redisCli(owner, 'cluster', 'keyslot', key))).toBe(keySlot(prefix));
      expect(keySlot(key)).toBe(keySlot(prefix));
    }
  }, 120_000);

  it('two instances on one ioredis Cluster: a 429 drawn by one pauses the other for its Retry-After', async () => {
    const client = new Cluster(cluster.nodes);
    const rateLimit = {
      requests: { limit: 1000, intervalMs: 1000 },
      redis: client,
      prefix: '{spec-pause}',
    };
    const a = await emailApp({ sandbox, rateLimit });
    const b = await emailApp({ sandbox, rateLimit });
    try {
      sandbox.faults.add({ route: 'POST /emails', mode: 'status', status: 429, retryAfter: 2, times: 1 });
      await a.email.send(mail(1, 'a')); // 429, paused 2 s, then sent
      await b.email.send(mail(2, 'b')); // paused by a's 429 although b never saw it
      const posts = sandbox.requests().filter((r) => r.method === 'POST');
      expect(posts.map((r) => r.status)).toEqual([429, 201, 201]);
      const at = Date.parse(posts[0].receivedAt);
      const bAt = Date.parse(
        posts.find((r) => String((r.json as { text: string }).text) === 'b-2')!.receivedAt,
      );
      expect(bAt - at).toBeGreaterThanOrEqual(1_500); // a lower bound only: the pause cannot be shorter
    } finally {
      await a.close();
      await b.close();
      client.disconnect(); // the app's client: the module leaves it open
    }
  }, 30_000);
  it("accounts: a 429 for one account pauses it in the other instance, not the other account; keys on the prefix's slot", async () => {
    const acme = sandbox.mailbox({ name: 'cluster-acme' });
    const globex = sandbox.mailbox({ name: 'cluster-globex' });
    const client = new Cluster(cluster.nodes);
    const options: Partial<EmailModuleOptions> = {
      apiKey: undefined,
      baseUrl: sandbox.baseUrl,
      accounts: (id: string) =>
        id === 'acme'
          ? { apiKey: acme.apiKey, rateLimit: { recipients: { limit: 20, intervalMs: 1000 } } }
          : id === 'globex'
            ? { apiKey: globex.apiKey }
            : null,
      maxRetries: 0,
      rateLimit: { redis: client, prefix: '{spec-accounts}' },
    };
    const a = await emailApp(options);
    const b = await emailApp(options);
    try {
      acme.faults.add({ route: 'POST /emails', mode: 'status', status: 429, retryAfter: 30, times: 1 });
      await expect(a.email.send(mail(1, 'acme'), { account: 'acme' })).rejects.toMatchObject({ status: 429 });
      const paused = await b.email
        .send(mail(2, 'acme'), { account: 'acme', timeoutMs: 1_000 })
        .catch((e: unknown) => e);
      expect(paused).toMatchObject({ name: 'EmailRateLimitError', budget: 'paused', budgetOf: 'account' });
      await b.email.send(mail(3, 'globex'), { account: 'globex' });
      expect(acme.requests()).toHaveLength(1); // the paused send made no request
      expect(globex.messages()).toHaveLength(1);
      const keys = await Promise.all(client.nodes('master').map((node) => node.keys('{spec-accounts}*')));
      const all = keys.flat();
      expect(all.some((k) => k.includes(':account:acme'))).toBe(true);
      for (const key of all) expect(keySlot(key)).toBe(keySlot('{spec-accounts}'));
    } finally {
      await a.close();
      await b.close();
      client.disconnect();
      await Promise.all([acme.close(), globex.close()]);
    }
  }, 30_000);
});

describe('rateLimit.redis on a Redis Cluster: a master lost mid-run', () => {
  it('sends go on while its replica takes over, then count on the new master', async () => {
    if (cluster.external) return; // killMaster needs a private cluster
    const prefix = '{spec-failover}';
    const app = await emailApp({
      sandbox,
      timeoutMs: 20_000,
      rateLimit: {
        recipients: { limit: 1000, intervalMs: 1000 },
        redis: { cluster: cluster.nodes },
        prefix,
      },
    });
    try {
      let i = 0;
      const sending = (async () => {
        const results: Array<'sent' | string> = [];
        while (i < 40) {
          results.push(
            await app.email.send(mail(i++, 'f')).then(
              () => 'sent',
              (err: Error) => err.name,
            ),
          );
          await new Promise((r) => setTimeout(r, 100));
        }
        return results;
      })();
      await new Promise((r) => setTimeout(r, 500));
      const { promoted } = await cluster.killMaster(prefix);
      const results = await sending;
      expect(results.filter((r) => r !== 'sent')).toEqual([]);
      expect(sandbox.messages()).toHaveLength(40);
      // counting comes back to the cluster, on the replica that took the slot over: once the client has
      // learnt the new topology (how soon depends on the machine, so each send looks, until the test's
      // timeout), a send is counted there. The count is read there right after each send, on a connection
      // kept open (the key lives one window, 1 s: a read that has to start redis-cli first, or a second
      // read, can come after it expired on a busy machine), and that read is the one asserted.
      const onPromoted = new Redis({ host: promoted.host, port: promoted.port, lazyConnect: true });
      let sent = 0;
      let counted = 0;
      try {
        await onPromoted.connect();
        for (;;) {
          await app.email.send(mail(100 + sent++, 'f'));
          counted = Number((await onPromoted.get(`${prefix}:recipients:all`)) ?? 0);
          if (counted > 0) break;
          await new Promise((r) => setTimeout(r, 200));
        }
      } finally {
        onPromoted.disconnect();
      }
      expect(counted).toBeGreaterThan(0);
      expect(sandbox.messages()).toHaveLength(40 + sent);
    } finally {
      await app.close();
    }
  }, 90_000);
});

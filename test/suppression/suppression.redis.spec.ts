import { Redis } from 'ioredis';
import {
  EmailError,
  EmailSuppressedError,
  EmailSuppressions,
  type EmailSuppressionOptions,
} from '../../lib/index.js';
import { emailApp } from '../support/email-app.js';
import { startRedis, type TestRedis } from '../support/redis-server.mjs';
import { useMailbox, useSandbox } from '../support/sandbox.js';
import { until } from '../support/worker-process.js';
import { startListProcess } from './support/list-process.js';
import {
  keepsLastKnown,
  letsThroughAgain,
  mailFrom,
  sharesOneList,
  type SharedList,
} from './support/shared-list.js';

// The list in a real Redis, shared by this process and a child process: what one adds, the other refuses
// from its own local copy (kept current by the stream it follows, no round trip per send); accounts never
// cross; a Redis that stops answering is handled as `whenStoreDown` says; `hashAddresses` leaves no
// address in Redis.

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

const sandbox = useSandbox();
const mailbox = useMailbox(sandbox, { domains: ['shop.test'] });
const mail = mailFrom('orders@shop.test');
let prefixes = 0;
const fresh = (extra: EmailSuppressionOptions = {}): EmailSuppressionOptions => ({
  redis: redis.url,
  prefix: `sup-${process.pid}-${++prefixes}`,
  ...extra,
});

async function app(suppression: EmailSuppressionOptions, more: Record<string, unknown> = {}) {
  const built = await emailApp({ sandbox: mailbox, suppression, ...more });
  return {
    ...built,
    suppressions: built.moduleRef.get(EmailSuppressions),
    gate: built.moduleRef.get(EmailSuppressions).gate,
  };
}

/** This process and a child on one list in Redis, for a scenario of `shared-list.ts`. */
async function onOneList(options: EmailSuppressionOptions, scenario: (shared: SharedList) => Promise<void>) {
  const other = await startListProcess(mailbox, options);
  const here = await app(options);
  try {
    await scenario({ here, other, mailbox, mail, freeze: () => redis.pause(), thaw: () => redis.resume() });
  } finally {
    await here.close();
    await other.close();
  }
}

describe('the suppression list in Redis', () => {
  it('two processes share one list: an add in one is refused by the other from its local copy', async () => {
    await onOneList(fresh(), sharesOneList);
  }, 60_000);

  it('remove and an ended entry let an address through again', async () => {
    const here = await app(fresh());
    try {
      await letsThroughAgain({ here, mail });
    } finally {
      await here.close();
    }
  });

  it('keeps the lists of accounts apart, learned entries included', async () => {
    const second = sandbox.mailbox({ domains: ['shop.test'] });
    const accounts = { resolve: (id: string) => ({ apiKey: id === 'a' ? mailbox.apiKey : second.apiKey }) };
    const here = await app(fresh(), { accounts });
    try {
      mailbox.bounce('x@example.com');
      const { id } = await here.email.send(mail(['x@example.com']), { account: 'a' });
      await here.email.get(id, { account: 'a' });
      await until(
        async () => (await here.suppressions.check('x@example.com', { account: 'a' })).length === 1,
        20_000,
        'learning',
      );
      await expect(here.email.send(mail(['x@example.com']), { account: 'a' })).rejects.toBeInstanceOf(
        EmailSuppressedError,
      );
      await expect(here.email.send(mail(['x@example.com']), { account: 'b' })).resolves.toMatchObject({
        status: 'sent',
      });
      await expect(here.email.send(mail(['x@example.com']))).resolves.toMatchObject({ status: 'sent' });
      expect(await here.suppressions.check('x@example.com', { account: 'b' })).toEqual([]);
      expect((await here.suppressions.list({ account: 'a' })).entries).toEqual([
        expect.objectContaining({ address: 'x@example.com', reason: 'bounced', account: 'a' }),
      ]);
    } finally {
      await here.close();
      await second.close();
    }
  });

  it('past maxLocalEntries, a send the local copy cannot answer reads the store, and is answered right', async () => {
    const here = await app(fresh({ maxLocalEntries: 2 }));
    try {
      await here.suppressions.add(['one@example.com', 'two@example.com', 'three@example.com'], {
        reason: 'manual',
      });
      expect(here.gate.mirror.complete).toBe(false);
      for (const address of ['one@example.com', 'two@example.com', 'three@example.com'])
        await expect(here.email.send(mail([address]))).rejects.toBeInstanceOf(EmailSuppressedError);
      await expect(here.email.send(mail(['four@example.com']))).resolves.toMatchObject({ status: 'sent' });
      expect(mailbox.messages().map((m) => m.toAddresses)).toEqual([['four@example.com']]);
    } finally {
      await here.close();
    }
  });

  it('a Redis that stops answering: by default sends go on from the last-known list, and nothing added is lost', async () => {
    await onOneList(fresh({ commandTimeoutMs: 500 }), keepsLastKnown);
  }, 60_000);

  it("with whenStoreDown: 'refuse', a send is refused (not-sent, retryable) while the list cannot be trusted", async () => {
    const here = await app(fresh({ commandTimeoutMs: 500, whenStoreDown: 'refuse' }));
    try {
      await expect(here.email.send(mail(['ok@example.com']))).resolves.toMatchObject({ status: 'sent' });
      redis.pause();
      try {
        await until(() => !here.gate.mirror.trusted, 20_000, 'the copy to see that Redis stopped answering');
        const err = await here.email.send(mail(['ok@example.com'])).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(EmailError);
        expect(err).not.toBeInstanceOf(EmailSuppressedError);
        expect(err).toMatchObject({ retryable: true, outcome: 'not-sent' });
      } finally {
        redis.resume();
      }
      expect(mailbox.requests()).toHaveLength(1);
      await until(() => here.gate.mirror.trusted, 20_000, 'the copy to catch up');
      await expect(here.email.send(mail(['ok@example.com']))).resolves.toMatchObject({ status: 'sent' });
    } finally {
      await here.close();
    }
  }, 60_000);

  it('with hashAddresses, Redis holds no address; list gives keyed hashes that remove takes', async () => {
    const options = fresh({ hashAddresses: { secret: 'a secret of at least 16 characters' } });
    const here = await app(options);
    const probe = new Redis(redis.url);
    try {
      mailbox.complain('private@example.com');
      const { id } = await here.email.send(mail(['private@example.com']));
      await here.email.get(id);
      await here.suppressions.add('Other.Private@Example.com', { reason: 'unsubscribed' });
      await until(
        async () => (await here.suppressions.check('private@example.com')).length === 1,
        20_000,
        'learning',
      );
      await expect(here.email.send(mail(['private@example.com']))).rejects.toBeInstanceOf(
        EmailSuppressedError,
      );
      const keys = await probe.keys(`${options.prefix}:*`);
      const dump: string[] = [...keys];
      for (const key of keys) {
        const type = await probe.type(key);
        if (type === 'hash') dump.push(JSON.stringify(await probe.hgetall(key)));
        if (type === 'zset') dump.push(JSON.stringify(await probe.zrange(key, '0', '-1')));
        if (type === 'stream') dump.push(JSON.stringify(await probe.xrange(key, '-', '+')));
      }
      expect(dump.join('\n').toLowerCase()).not.toMatch(/private|example\.com|@/);
      const { entries } = await here.suppressions.list();
      expect(entries.map((e) => e.address)).toEqual([
        expect.stringMatching(/^hmac:/),
        expect.stringMatching(/^hmac:/),
      ]);
      expect(await here.suppressions.remove(entries.map((e) => e.address))).toBe(2);
      await expect(here.email.send(mail(['private@example.com']))).resolves.toMatchObject({ status: 'sent' });
    } finally {
      probe.disconnect();
      await here.close();
    }
  });
});

import { EmailSuppressedError, EmailSuppressions } from '../../lib/index.js';
import { emailApp } from '../support/email-app.js';
import { startRedis, type TestRedis } from '../support/redis-server.mjs';
import { useSandbox } from '../support/sandbox.js';
import { until } from '../support/worker-process.js';

// Where the list lives by default with a shared rateLimit (its Redis), and the optional sweep: at boot and
// then once per interval, one process of those sharing the store reads each account's latest records and
// learns from them, through the rateLimit budgets.

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis?.stop());
const sandbox = useSandbox({ reset: true });
const mail = (to: string) => ({ from: 'shop@example.com', to: [to], subject: 'Hi', text: 'Hello' });
const lists = () =>
  sandbox.requests().filter((r) => r.method === 'GET' && r.path.startsWith('/emails?')).length;

describe('the sweep and the default store', () => {
  it('with a shared rateLimit and no suppression option, the list lives in its Redis and every process shares it', async () => {
    const rateLimit = {
      requests: { limit: 1000, intervalMs: 1000 },
      redis: redis.url,
      prefix: `rl-${process.pid}`,
    };
    const one = await emailApp({ sandbox, rateLimit });
    const two = await emailApp({ sandbox, rateLimit });
    try {
      expect(one.moduleRef.get(EmailSuppressions).gate.storeKind).toBe('redis');
      await one.moduleRef.get(EmailSuppressions).add('shared@example.com', { reason: 'unsubscribed' });
      await until(
        async () => (await two.moduleRef.get(EmailSuppressions).check('shared@example.com')).length === 1,
        20_000,
        'sharing',
      );
      await until(
        () => two.moduleRef.get(EmailSuppressions).gate.mirror.set.size === 1,
        20_000,
        'the notification',
      );
      await expect(two.email.send(mail('shared@example.com'))).rejects.toBeInstanceOf(EmailSuppressedError);
    } finally {
      await one.close();
      await two.close();
    }
  });

  it('learns at boot what bounced while the app was away, one sweep for all the processes of the interval', async () => {
    const before = await emailApp({ sandbox, suppression: false });
    sandbox.bounce('away@example.com');
    await before.email.send(mail('away@example.com'));
    await before.close();
    const suppression = { redis: redis.url, prefix: `sweep-${process.pid}`, sweep: { everyMs: 60_000 } };
    const one = await emailApp({ sandbox, suppression });
    const two = await emailApp({ sandbox, suppression });
    try {
      const sweeps = [one, two].map((a) => a.moduleRef.get(EmailSuppressions).sweep?.first);
      await Promise.all(sweeps);
      expect(lists()).toBe(1); // one process took the account's sweep of this interval
      await until(
        async () => (await two.moduleRef.get(EmailSuppressions).check('away@example.com')).length === 1,
        20_000,
        'learning',
      );
      await until(
        () => one.moduleRef.get(EmailSuppressions).gate.mirror.set.size === 1,
        20_000,
        'the notification',
      );
      await expect(one.email.send(mail('away@example.com'))).rejects.toBeInstanceOf(EmailSuppressedError);
    } finally {
      await one.close();
      await two.close();
    }
  });
});

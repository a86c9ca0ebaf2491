import { emailApp } from '../support/email-app.js';
import { startRedis } from '../support/redis-server.mjs';
import { useSandbox } from '../support/sandbox.js';

/** The timers keeping this process alive now (Node's own count; Jest's test timeout is one of them). */
const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;

// An app whose suppression list lives in a Redis that went away leaves nothing running once closed: the
// list's follower read was in flight when the connection dropped, and a deadline kept by the Redis client
// for it kept the process (a Jest worker, an app's shutdown) alive up to the read's deadline (up to 35 s)
// after close.
describe("the Redis suppression store's follower, closed after its Redis went away", () => {
  const sandbox = useSandbox();

  it('keeps no timer alive once the app is closed', async () => {
    const redis = await startRedis();
    const before = timers();
    const app = await emailApp({ sandbox, suppression: { redis: redis.url, prefix: `gone-${process.pid}` } });
    try {
      await app.email.send({ from: 'a@example.com', to: ['b@example.org'], subject: 'x', text: 'y' });
      await redis.stop(); // the follower's blocking read was in flight
      await new Promise((r) => setTimeout(r, 300)); // the client notices, and tries again
    } finally {
      await app.close();
    }
    await new Promise((r) => setTimeout(r, 300));
    expect(timers()).toBeLessThanOrEqual(before);
  });
});

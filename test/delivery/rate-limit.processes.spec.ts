import { Redis } from 'ioredis';
import { LATE_429S } from '../support/late-429s.js';
import { startRedis, type TestRedis } from '../support/redis-server.mjs';
import { runSendersTogether, type SenderTally } from './support/rate-processes.js';
import { useSandbox } from '../support/sandbox.js';

// Three real processes (child node processes, each with its own EmailModule) on one sandbox: what
// `rateLimit.redis` must give is one budget for all of them.

const QUOTA = { recipients: 30, windowMs: 1000 };
const PER_PROCESS = 30; // 1 to 3 recipients each: about 60 recipients per process, 180 in all

let redis: TestRedis;
const sandbox = useSandbox({ quota: QUOTA, maxRequestLog: 5000, reset: true });
let run = 0;

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

/** Starts three senders together (once all three have booted) and waits for their tallies. */
function threeProcesses(env: Record<string, string>): Promise<SenderTally[]> {
  run++;
  return runSendersTogether(
    [0, 1, 2].map((p) => ({
      EMAIL_BASE_URL: sandbox.baseUrl,
      EMAIL_API_KEY: sandbox.apiKey,
      COUNT: String(PER_PROCESS),
      CONCURRENCY: '6',
      TAG: `r${run}p${p}`,
      ...env,
    })),
  );
}

const total = (tallies: SenderTally[], field: keyof SenderTally) =>
  tallies.reduce((sum, t) => sum + t[field], 0);

describe('rateLimit shared through Redis by three processes', () => {
  it('without it, three processes at this load draw 429s from the quota', async () => {
    const tallies = await threeProcesses({ MAX_RETRIES: '0' });
    expect(sandbox.limited().quota).toBeGreaterThan(0);
    expect(total(tallies, 'serviceLimited')).toBeGreaterThan(0);
  }, 120_000);

  it('with one Redis budget, the same load draws no 429 and every email goes', async () => {
    const rateLimit = {
      recipients: { limit: QUOTA.recipients, intervalMs: QUOTA.windowMs },
      redis: redis.url,
    };
    const tallies = await threeProcesses({
      TIMEOUT_MS: '60000',
      RATE_LIMIT: JSON.stringify({ ...rateLimit, prefix: `spec-${run + 1}` }),
    });
    // three processes each spending the whole budget would draw dozens
    expect(sandbox.limited().quota).toBeLessThanOrEqual(LATE_429S);
    expect(total(tallies, 'sent')).toBe(3 * PER_PROCESS);
    expect(sandbox.messages()).toHaveLength(3 * PER_PROCESS);
  }, 120_000);

  it('a 429 drawn by one process pauses the others for its Retry-After', async () => {
    sandbox.faults.add({
      route: 'POST /emails',
      mode: 'status',
      status: 429,
      retryAfter: 5, // long enough to be seen from here whatever the load
      times: 1,
      skip: 10,
    });
    const rateLimit = {
      recipients: { limit: QUOTA.recipients, intervalMs: QUOTA.windowMs },
      requests: { limit: 1000, intervalMs: 1000 },
      redis: redis.url,
      prefix: `spec-${run + 1}`,
    };
    // The pause lives in the shared Redis: watched from here, from the moment it is there (seen a little
    // after it was written, however busy the machine) until it ends, its remaining time read then.
    const watcher = new Redis(redis.url);
    const key = `${rateLimit.prefix}:recipients:all`;
    let paused: { from: number; until: number } | undefined;
    let watching = true;
    const watching$ = (async () => {
      while (watching && paused === undefined) {
        const asked = Date.now();
        const [count, ttl] = await Promise.all([watcher.get(key), watcher.pttl(key)]);
        // a pause is a block of the budget for the Retry-After (5 s): more than a full window's count, and
        // a time to live past a window's (a refused request also counts past the limit, for its window); it was
        // in place by the answer, and ends no sooner than the time of the question plus what was left of it
        if (Number(count) > QUOTA.recipients && ttl > 1_500)
          paused = { from: Date.now(), until: asked + ttl };
        else await new Promise((r) => setTimeout(r, 20));
      }
    })();
    let tallies: SenderTally[];
    try {
      tallies = await threeProcesses({ RATE_LIMIT: JSON.stringify(rateLimit), TIMEOUT_MS: '60000' });
    } finally {
      watching = false;
      await watching$;
      watcher.disconnect();
    }
    expect(total(tallies, 'sent')).toBe(3 * PER_PROCESS);
    expect(sandbox.limited().quota).toBeLessThanOrEqual(LATE_429S);
    const posts = sandbox.requests().filter((r) => r.method === 'POST');
    const hit = posts.find((r) => r.status === 429)!;
    const tagOf = (r: (typeof posts)[number]) => String((r.json as { text: string }).text).split('-')[0];
    expect(paused).toBeDefined();
    const { from, until } = paused!;
    // While the pause is in Redis, no process lets a request through: what reaches the service then was
    // let through before it was written, at most each process's requests in flight (CONCURRENCY 6).
    // Unpaused, the budget alone would let some 15 requests a second through.
    const during = posts.filter((r) => {
      const t = Date.parse(r.receivedAt);
      return t > from && t < until;
    });
    expect(during.length).toBeLessThanOrEqual(3 * 6);
    // the others were paused too, then went on
    const after = posts.filter((r) => Date.parse(r.receivedAt) >= until);
    expect(new Set(after.map(tagOf)).size).toBeGreaterThanOrEqual(2);
    expect(after.some((r) => tagOf(r) !== tagOf(hit))).toBe(true);
  }, 120_000);
});

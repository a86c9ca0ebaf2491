import { getEventListeners } from 'node:events';
import {
  EmailApiError,
  EmailBadRequestError,
  EmailConflictError,
  EmailConnectionError,
  EmailServerError,
  EmailTimeoutError,
  EmailUnexpectedResponseError,
} from '../../lib/index.js';
import { useScriptedEmailApp } from '../support/email-app.js';
import {
  backoffDelay,
  isRetryable,
  RETRY_AFTER_CAP_MS,
  RETRY_BACKOFF,
  retryPlan,
  type FailedAttempt,
} from '../../lib/policy/delivery.policy.js';
import { realClock } from '../../lib/time/clock.helpers.js';
import { jobBackoffDelay } from '../../lib/policy/job.policy.js';

const RETRY_BASE_DELAY_MS = RETRY_BACKOFF.baseMs;
const RETRY_MAX_DELAY_MS = RETRY_BACKOFF.maxMs;
const abortableSleep = realClock.sleep.bind(realClock);

/** The wait before retry number `retry` of an idempotent call with all the time in the world. */
const retryDelay = (f: Omit<FailedAttempt, 'processed'>, retry: number, random?: () => number) =>
  retryPlan(
    { ...f, processed: false },
    { attempt: retry + 1, maxRetries: 99, idempotent: true, uncertain: false, deadline: Infinity },
    0,
    random,
  ).delayMs;

/** The table's verdict on an error, as the loop classifies it. */
const isTransient = (err: unknown): boolean => {
  if (err instanceof EmailApiError) return isRetryable('status', err.status);
  if (err instanceof EmailConnectionError) return isRetryable('connection');
  if (err instanceof EmailTimeoutError) return isRetryable('timeout');
  if (err instanceof EmailUnexpectedResponseError) return isRetryable('unexpected-response');
  return false;
};

const api = { method: 'GET', path: '/emails' };

describe('retry policy', () => {
  it('backs off exponentially with full jitter, capped', () => {
    const top = () => 0.999999;
    expect(backoffDelay(0, () => 0)).toBe(0);
    expect(backoffDelay(0, top)).toBe(RETRY_BASE_DELAY_MS - 1);
    expect(backoffDelay(1, top)).toBe(2 * RETRY_BASE_DELAY_MS - 1);
    expect(backoffDelay(2, top)).toBe(4 * RETRY_BASE_DELAY_MS - 1);
    expect(backoffDelay(20, top)).toBe(RETRY_MAX_DELAY_MS - 1);
    expect(backoffDelay(5000, top)).toBe(RETRY_MAX_DELAY_MS - 1);
    expect(backoffDelay(1, () => 0.5)).toBe(RETRY_BASE_DELAY_MS);
    const spread = new Set(Array.from({ length: 50 }, () => backoffDelay(3)));
    expect(spread.size).toBeGreaterThan(10); // really random, not a fixed ladder
  });

  it("gives the queue the same full jitter on the queue's own schedule", () => {
    const backoff = { delayMs: 1000, maxDelayMs: 60_000 };
    const top = () => 0.999999;
    expect(jobBackoffDelay(1, backoff, () => 0)).toBe(0);
    expect(jobBackoffDelay(1, backoff, top)).toBe(999);
    expect(jobBackoffDelay(3, backoff, top)).toBe(3999);
    expect(jobBackoffDelay(40, backoff, top)).toBe(59_999);
  });

  it('obeys Retry-After up to the cap, and refuses to wait longer', () => {
    const limited = (retryAfterMs?: number) => ({ retryable: true, status: 429, retryAfterMs });
    expect(retryDelay(limited(1500), 0)).toBe(1500);
    expect(retryDelay(limited(0), 4)).toBe(4000); // the backoff ceiling is the floor
    expect(retryDelay(limited(RETRY_AFTER_CAP_MS), 0)).toBe(RETRY_AFTER_CAP_MS);
    expect(retryDelay(limited(RETRY_AFTER_CAP_MS + 1), 0)).toBeUndefined();
    expect(retryDelay(limited(undefined), 1, () => 0.5)).toBe(RETRY_BASE_DELAY_MS);
    expect(retryDelay({ retryable: true, status: 500 }, 0, () => 0.5)).toBe(RETRY_BASE_DELAY_MS / 2);
  });

  it('counts connection errors, timeouts, 429, 500, 502, 503 as transient, nothing else', () => {
    const status = (s: number) => new EmailServerError({ status: s, ...api });
    expect(isTransient(new EmailConnectionError({ ...api, reason: 'ECONNRESET' }))).toBe(true);
    expect(isTransient(new EmailTimeoutError({ ...api, timeoutMs: 1 }))).toBe(true);
    for (const s of [429, 500, 502, 503]) expect(isTransient(status(s))).toBe(true);
    for (const s of [400, 401, 403, 404, 409, 501, 504]) expect(isTransient(status(s))).toBe(false);
    expect(isTransient(new EmailBadRequestError({ status: 400, ...api }))).toBe(false);
    expect(isTransient(new EmailConflictError({ status: 409, ...api }))).toBe(false);
    expect(
      isTransient(new EmailUnexpectedResponseError({ ...api, status: 200, reason: 'x', excerpt: '' })),
    ).toBe(false);
    expect(isTransient(new Error('boom'))).toBe(false);
  });
});

describe('abortableSleep', () => {
  it('sleeps the whole time when nothing cuts it', async () => {
    const started = Date.now();
    expect(await abortableSleep(120)).toBe('elapsed');
    expect(Date.now() - started).toBeGreaterThanOrEqual(110);
  });

  it('ends at once on abort and removes its listener', async () => {
    const controller = new AbortController();
    // a minute outlasts the test's timeout: ending at all means the abort ended it
    const sleeping = abortableSleep(60_000, { signal: controller.signal });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    setTimeout(() => controller.abort(), 50);
    expect(await sleeping).toBe('aborted');
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('removes its listener when it ends normally', async () => {
    const controller = new AbortController();
    expect(await abortableSleep(10, { signal: controller.signal })).toBe('elapsed');
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('never outlives the deadline', async () => {
    const started = Date.now();
    // a minute outlasts the test's timeout: ending at all means the deadline ended it
    expect(await abortableSleep(60_000, { deadline: started + 80 })).toBe('deadline');
    expect(Date.now() - started).toBeGreaterThanOrEqual(70);
    expect(await abortableSleep(5000, { deadline: Date.now() - 1 })).toBe('deadline');
    expect(await abortableSleep(5000, { signal: AbortSignal.abort() })).toBe('aborted');
  });
});

describe('one table: the public retryable flag and the request loop agree', () => {
  const app = useScriptedEmailApp({ maxRetries: 1, scope: 'all' });
  const statuses = [400, 401, 403, 404, 408, 409, 418, 422, 429, 500, 501, 502, 503, 504, 505, 599];

  it.each(statuses)(
    'status %i: retried by the loop exactly when the error says retryable',
    async (status) => {
      app.server.requests.length = 0;
      app.server.handle((_req, res) => {
        res.writeHead(status, { 'content-type': 'application/json', 'retry-after': '0' });
        res.end(JSON.stringify({ error: `scripted ${status}` }));
      });
      const err = (await app.email.list().then(
        () => undefined,
        (e: unknown) => e,
      )) as EmailApiError;
      expect(err).toBeInstanceOf(EmailApiError);
      const retried = app.server.requests.length > 1;
      expect({ status, retryable: err.retryable }).toEqual({ status, retryable: retried });
      expect(isTransient(err)).toBe(err.retryable);
    },
  );
});

// The shared job routine (lib/jobs) on the pg-boss engine: what the queue's outcome specs establish for
// BullMQ, through EmailOutbox over real PostgreSQL and the sandbox.
import { EmailForbiddenError, EmailSendUncertainError } from '../../lib/index.js';
import { mail, outboxApp, posts, until, useOutboxWorld } from './outbox.support.js';

const world = useOutboxWorld();

describe('EmailOutbox outcomes (the one job routine on pg-boss)', () => {
  let app: Awaited<ReturnType<typeof outboxApp>>;
  beforeAll(async () => {
    app = await outboxApp(world.sandbox, { connection: world.postgres.url, concurrency: 2, attempts: 3 });
  }, 30_000);
  afterAll(() => app?.close());
  afterEach(() => world.sandbox.faults.clear());

  it('a 503 is retried with the same key; the job ends sent after 2 attempts', async () => {
    world.sandbox.faults.add({ route: 'POST /emails', mode: 'status', status: 503, times: 1 });
    const { jobId, idempotencyKey } = await app.outbox.send(mail('Retry 503'), { jobId: 'retry-503' });
    const record = await app.outbox.waitFor(jobId, { timeoutMs: 20_000 });
    expect(posts(world.sandbox).map((p) => p.key)).toEqual([idempotencyKey, idempotencyKey]);
    expect(await app.outbox.status(jobId)).toMatchObject({
      state: 'sent',
      attempts: 2,
      messageId: record.id,
    });
  }, 30_000);

  it('a 403 (sender domain not verified) ends the job at once, failed, with no second attempt', async () => {
    const failed: boolean[] = [];
    const onFailed = ({ final }: { final: boolean }) => failed.push(final);
    app.outbox.on('failed', onFailed);
    try {
      const input = { ...mail('Unverified sender'), from: 'shop@unverified-domain.test' };
      const { jobId } = await app.outbox.send(input, { jobId: 'forbidden-403' });
      await expect(app.outbox.waitFor(jobId, { timeoutMs: 15_000 })).rejects.toBeInstanceOf(
        EmailForbiddenError,
      );
      expect(await app.outbox.status(jobId)).toMatchObject({
        state: 'failed',
        error: { name: 'EmailForbiddenError' },
      });
      expect(posts(world.sandbox)).toHaveLength(1);
      expect(failed).toEqual([true]);
    } finally {
      app.outbox.off('failed', onFailed);
    }
  }, 30_000);

  it('a 429 pauses the workers for Retry-After and spends no attempt', async () => {
    world.sandbox.faults.add({ route: 'POST /emails', mode: 'status', status: 429, retryAfter: 1, times: 1 });
    const limited: number[] = [];
    const onLimited = ({ retryAfterMs }: { retryAfterMs: number }) => limited.push(retryAfterMs);
    app.outbox.on('rateLimited', onLimited);
    try {
      const { jobId } = await app.outbox.send(mail('Rate limited'), { jobId: 'rl-429' });
      await app.outbox.waitFor(jobId, { timeoutMs: 15_000 });
      expect(limited).toEqual([1000]);
      expect(await app.outbox.status(jobId)).toMatchObject({ state: 'sent', attempts: 1 });
    } finally {
      app.outbox.off('rateLimited', onLimited);
    }
  }, 30_000);

  it('every attempt uncertain (the answer lost after the service created it): one email, no look-alike adopted', async () => {
    // Another email with the same content exists already: a look-up would find it; the job must not adopt it.
    const { jobId: twin } = await app.outbox.send(mail('Same content'), { jobId: 'twin-first' });
    await app.outbox.waitFor(twin, { timeoutMs: 15_000 });
    world.sandbox.faults.add({ route: 'POST /emails', mode: 'drop-after', times: 1 });
    const { jobId, idempotencyKey } = await app.outbox.send(mail('Same content'), { jobId: 'twin-second' });
    const record = await app.outbox.waitFor(jobId, { timeoutMs: 20_000 });
    await until(() => posts(world.sandbox).length >= 3, 5000, 'the replayed POST');
    const mine = posts(world.sandbox).filter((p) => p.key === idempotencyKey);
    expect(mine.length).toBeGreaterThanOrEqual(2); // the lost answer, then the key's replay
    expect(world.sandbox.messages().filter((m) => m.subject === 'Same content')).toHaveLength(2);
    expect(record.id).not.toBe((await app.outbox.status(twin))?.messageId);
  }, 40_000);

  it('attempts run out after uncertain ones: the job fails EmailSendUncertainError', async () => {
    world.sandbox.faults.add({ route: 'POST /emails', mode: 'drop-before', times: Infinity });
    const { jobId } = await app.outbox.send(mail('Never answered'), { jobId: 'uncertain-1' });
    await expect(app.outbox.waitFor(jobId, { timeoutMs: 30_000 })).rejects.toBeInstanceOf(
      EmailSendUncertainError,
    );
    expect(await app.outbox.status(jobId)).toMatchObject({
      state: 'failed',
      attempts: 3,
      error: { outcome: 'uncertain' },
    });
  }, 40_000);
});

import { emailErrorToHttpException } from '../../lib/interceptors/email-error.helpers.js';
import { EmailError } from '../../lib/index.js';
import {
  ENGINES,
  errorOf,
  lookAlike,
  postsWith,
  sleep,
  templated,
  until,
  useEngine,
} from './jobs.support.js';

/**
 * API.md: `cancel(jobId, { tx? })` and `reschedule(jobId, { delayMs } | { at }, { tx? })` act on a job no
 * attempt has reached the service with, and say what happened; `status` shows `cancelled` and `runAt`,
 * `waitFor` of a cancelled job is `EmailJobCancelledError`. Each test keeps a look-alike job running beside
 * the one it cancels or moves (same sender, recipients and subject): the workers did run, and the look-alike
 * is neither cancelled nor moved with it.
 */
const SETTLE_MS = 1500;

describe.each(ENGINES)('cancel and reschedule on the %s', (name) => {
  const engine = useEngine(name);

  it('cancels a delayed job: cancelled status, nothing sent, waitFor is EmailJobCancelledError', async () => {
    const app = await engine.app();
    const { jobId, idempotencyKey } = await app.jobs.send(lookAlike('Your cart misses you'), {
      jobId: 'cart:reminder:1',
      delayMs: 60_000,
    });
    expect(await app.jobs.status(jobId)).toMatchObject({ state: 'delayed', idempotencyKey, attempts: 0 });

    expect(await app.jobs.cancel(jobId)).toEqual({ cancelled: true });
    expect(await app.jobs.status(jobId)).toMatchObject({
      jobId,
      state: 'cancelled',
      idempotencyKey,
      attempts: 0,
    });

    const waited = await errorOf(app.jobs.waitFor(jobId, { timeoutMs: 5_000 }));
    expect(waited).toBeInstanceOf(engine.cancelledError);
    expect(emailErrorToHttpException(waited)?.getStatus()).toBe(409);
    expect(waited).toBeInstanceOf(EmailError);

    // a second cancel and a reschedule are too late: they say so and change nothing
    expect(await app.jobs.cancel(jobId)).toEqual({ cancelled: false, state: 'cancelled' });
    expect(await app.jobs.reschedule(jobId, { delayMs: 0 })).toEqual({
      rescheduled: false,
      state: 'cancelled',
    });

    // a look-alike job beside it is sent: the workers ran, and the cancelled one stayed unsent
    const other = await app.jobs.send(lookAlike('Your cart is saved'), { jobId: 'cart:reminder:2' });
    const record = await app.jobs.waitFor(other.jobId, { timeoutMs: 15_000 });
    await sleep(SETTLE_MS);
    expect(postsWith(engine.sandbox, idempotencyKey)).toEqual([]);
    expect(engine.sandbox.messages().map((m) => m.id)).toEqual([record.id]);
    expect(await app.jobs.status(jobId)).toMatchObject({ state: 'cancelled' });
  }, 40_000);

  it('cancels a waiting job that no worker took yet; a worker started later never sends it', async () => {
    const producer = await engine.app({ worker: false });
    const cancelled = await producer.jobs.send(templated('A-1'), { jobId: 'order:A-1' });
    const kept = await producer.jobs.send(templated('A-2'), { jobId: 'order:A-2' });
    expect(await producer.jobs.status(cancelled.jobId)).toMatchObject({ state: 'waiting' });
    expect(await producer.jobs.cancel(cancelled.jobId)).toEqual({ cancelled: true });

    const worker = await engine.app({ namespace: producer.namespace });
    const record = await worker.jobs.waitFor(kept.jobId, { timeoutMs: 15_000 });
    await sleep(SETTLE_MS);
    expect(postsWith(engine.sandbox, cancelled.idempotencyKey)).toEqual([]);
    expect(engine.sandbox.messages().map((m) => m.id)).toEqual([record.id]);
    expect(await worker.jobs.status(cancelled.jobId)).toMatchObject({ state: 'cancelled' });
    expect(await errorOf(worker.jobs.waitFor(cancelled.jobId, { timeoutMs: 5_000 }))).toBeInstanceOf(
      engine.cancelledError,
    );
  }, 40_000);

  it('after the job was sent, cancel and reschedule answer too late with state sent, and change nothing', async () => {
    const app = await engine.app();
    const { jobId } = await app.jobs.send(lookAlike('Receipt 7'), { jobId: 'receipt:7' });
    const record = await app.jobs.waitFor(jobId, { timeoutMs: 15_000 });
    expect(await app.jobs.cancel(jobId)).toEqual({ cancelled: false, state: 'sent' });
    expect(await app.jobs.reschedule(jobId, { delayMs: 0 })).toEqual({ rescheduled: false, state: 'sent' });
    expect(await app.jobs.reschedule(jobId, { at: new Date(Date.now() + 60_000) })).toEqual({
      rescheduled: false,
      state: 'sent',
    });
    const status = await app.jobs.status(jobId);
    expect(status).toMatchObject({ state: 'sent', messageId: record.id });
    expect(status?.record?.id).toBe(record.id);
    expect((await app.jobs.waitFor(jobId, { timeoutMs: 5_000 })).id).toBe(record.id);
    await sleep(SETTLE_MS);
    expect(engine.sandbox.messages()).toHaveLength(1);
  }, 30_000);

  it('a job whose attempt may have reached the service cannot be cancelled: it ends sent, one email', async () => {
    const app = await engine.app({ attempts: 3 });
    // the service creates the message, then answers 500: the attempt may have been accepted
    engine.sandbox.faults.add({ route: 'POST /emails', mode: 'fail-after', status: 500, times: 1 });
    const input = lookAlike('Your password was changed');
    const { jobId, idempotencyKey } = await app.jobs.send(input, { jobId: 'password:changed' });
    await until(() => postsWith(engine.sandbox, idempotencyKey).length >= 1, 15_000, 'the first attempt');
    const answer = await app.jobs.cancel(jobId);
    // too late: the job is active, or waits for its next attempt (API.md lists no state for the latter)
    expect(answer.cancelled).toBe(false);
    const record = await app.jobs.waitFor(jobId, { timeoutMs: 20_000 });
    expect(await app.jobs.status(jobId)).toMatchObject({ state: 'sent', messageId: record.id });
    await sleep(SETTLE_MS);
    expect(engine.sandbox.messages()).toHaveLength(1);
    expect(engine.sandbox.message(record.id)?.bodyText).toBe(input.text);
  }, 40_000);

  it('an unknown job id: cancel and reschedule answer state null', async () => {
    const app = await engine.app();
    expect(await app.jobs.cancel('never:queued')).toEqual({ cancelled: false, state: null });
    expect(await app.jobs.reschedule('never:queued', { delayMs: 0 })).toEqual({
      rescheduled: false,
      state: null,
    });
    expect(await app.jobs.status('never:queued')).toBeNull();
  }, 30_000);

  it('reschedule { delayMs: 0 } sends a job delayed by a minute now', async () => {
    const app = await engine.app();
    const input = lookAlike('Your trial ends tomorrow');
    const { jobId, idempotencyKey } = await app.jobs.send(input, { jobId: 'trial:end', delayMs: 60_000 });
    const look = await app.jobs.send(lookAlike('Your trial ends in a week'), {
      jobId: 'trial:week',
      delayMs: 60_000,
    });
    expect(await app.jobs.reschedule(jobId, { delayMs: 0 })).toEqual({ rescheduled: true });
    const record = await app.jobs.waitFor(jobId, { timeoutMs: 15_000 });
    expect(engine.sandbox.message(record.id)?.bodyText).toBe(input.text);
    expect(await app.jobs.status(jobId)).toMatchObject({ state: 'sent', attempts: 1, idempotencyKey });
    // the look-alike keeps its own delay
    expect(await app.jobs.status(look.jobId)).toMatchObject({ state: 'delayed' });
    await sleep(SETTLE_MS);
    expect(engine.sandbox.messages()).toHaveLength(1);
    expect(postsWith(engine.sandbox, look.idempotencyKey)).toEqual([]);
  }, 30_000);

  it('reschedule { at } later: delayed with that runAt, not sent meanwhile, then reschedule { delayMs } sends it', async () => {
    const app = await engine.app();
    // due in 1 s: without the reschedule it would be sent during the wait below
    const { jobId, idempotencyKey } = await app.jobs.send(lookAlike('Your invoice is due'), {
      jobId: 'invoice:due',
      delayMs: 1_000,
    });
    const at = new Date(Date.now() + 60_000);
    expect(await app.jobs.reschedule(jobId, { at })).toEqual({ rescheduled: true });
    const status = await app.jobs.status(jobId);
    expect(status).toMatchObject({ state: 'delayed', attempts: 0 });
    expect(status?.runAt).toBeInstanceOf(Date);
    expect(status?.runAt?.getTime()).toBeCloseTo(at.getTime(), -3);

    await sleep(1_000 + SETTLE_MS);
    expect(postsWith(engine.sandbox, idempotencyKey)).toEqual([]);
    expect(await app.jobs.status(jobId)).toMatchObject({ state: 'delayed' });

    expect(await app.jobs.reschedule(jobId, { delayMs: 0 })).toEqual({ rescheduled: true });
    const record = await app.jobs.waitFor(jobId, { timeoutMs: 15_000 });
    expect(engine.sandbox.message(record.id)?.bodyText).toBe('Your invoice is due');
  }, 40_000);

  it('reschedule of a waiting job (no worker yet) to later: a worker started meanwhile does not send it', async () => {
    const producer = await engine.app({ worker: false });
    const { jobId, idempotencyKey } = await producer.jobs.send(lookAlike('See you soon'), {
      jobId: 'later:1',
    });
    expect(await producer.jobs.reschedule(jobId, { delayMs: 60_000 })).toEqual({ rescheduled: true });
    expect(await producer.jobs.status(jobId)).toMatchObject({ state: 'delayed' });
    const worker = await engine.app({ namespace: producer.namespace });
    const other = await worker.jobs.send(lookAlike('See you later'), { jobId: 'later:2' });
    await worker.jobs.waitFor(other.jobId, { timeoutMs: 15_000 });
    await sleep(SETTLE_MS);
    expect(postsWith(engine.sandbox, idempotencyKey)).toEqual([]);
    expect(await worker.jobs.status(jobId)).toMatchObject({ state: 'delayed' });
  }, 40_000);

  if (name === 'outbox')
    describe("inside the app's transaction", () => {
      const orders = async (ref: string) =>
        Number((await engine.pool.query('SELECT count(*) AS n FROM orders WHERE ref = $1', [ref])).rows[0].n);

      it('cancel in a committed transaction: nothing is sent, the app row is there', async () => {
        const producer = await engine.app({ worker: false });
        const outbox = producer.outbox!;
        const { jobId, idempotencyKey } = await outbox.send(lookAlike('Order 1 confirmed'), { jobId: 'o:1' });
        const answer = await engine.inTx(async (tx) => {
          await tx.query('INSERT INTO orders (ref) VALUES ($1)', ['o:1 cancelled by the user']);
          return outbox.cancel(jobId, { tx });
        });
        expect(answer).toEqual({ cancelled: true });
        expect(await orders('o:1 cancelled by the user')).toBe(1);
        const worker = await engine.app({ namespace: producer.namespace });
        const other = await worker.jobs.send(lookAlike('Order 2 confirmed'), { jobId: 'o:2' });
        await worker.jobs.waitFor(other.jobId, { timeoutMs: 15_000 });
        await sleep(SETTLE_MS);
        expect(postsWith(engine.sandbox, idempotencyKey)).toEqual([]);
        expect(await worker.jobs.status(jobId)).toMatchObject({ state: 'cancelled' });
      }, 40_000);

      it('cancel in a rolled-back transaction: the email is sent', async () => {
        const producer = await engine.app({ worker: false });
        const outbox = producer.outbox!;
        const input = lookAlike('Order 3 confirmed');
        const { jobId } = await outbox.send(input, { jobId: 'o:3' });
        const answer = await errorOf(
          engine.inTx(async (tx) => {
            await tx.query('INSERT INTO orders (ref) VALUES ($1)', ['o:3 rolled back']);
            expect(await outbox.cancel(jobId, { tx })).toEqual({ cancelled: true });
            throw new Error('the app rolls back');
          }),
        );
        expect((answer as Error).message).toBe('the app rolls back');
        expect(await orders('o:3 rolled back')).toBe(0);
        expect(await outbox.status(jobId)).toMatchObject({ state: 'waiting' });
        const worker = await engine.app({ namespace: producer.namespace });
        const record = await worker.jobs.waitFor(jobId, { timeoutMs: 15_000 });
        expect(engine.sandbox.message(record.id)?.bodyText).toBe(input.text);
        expect(engine.sandbox.messages()).toHaveLength(1);
      }, 40_000);

      it('send and cancel in one committed transaction: nothing is sent', async () => {
        const app = await engine.app();
        const outbox = app.outbox!;
        const { idempotencyKey, answer } = await engine.inTx(async (tx) => {
          const queued = await outbox.send(lookAlike('Order 4 confirmed'), { tx, jobId: 'o:4' });
          return { ...queued, answer: await outbox.cancel('o:4', { tx }) };
        });
        expect(answer).toEqual({ cancelled: true });
        const other = await outbox.send(lookAlike('Order 5 confirmed'), { jobId: 'o:5' });
        await outbox.waitFor(other.jobId, { timeoutMs: 15_000 });
        await sleep(SETTLE_MS);
        expect(postsWith(engine.sandbox, idempotencyKey)).toEqual([]);
        expect(await outbox.status('o:4')).toMatchObject({ state: 'cancelled' });
      }, 40_000);

      it('reschedule in a rolled-back transaction changes nothing; in a committed one it applies', async () => {
        const app = await engine.app();
        const outbox = app.outbox!;
        const { jobId, idempotencyKey } = await outbox.send(lookAlike('Order 6 shipped'), {
          jobId: 'o:6',
          delayMs: 60_000,
        });
        await errorOf(
          engine.inTx(async (tx) => {
            expect(await outbox.reschedule(jobId, { delayMs: 0 }, { tx })).toEqual({ rescheduled: true });
            throw new Error('the app rolls back');
          }),
        );
        await sleep(SETTLE_MS);
        expect(postsWith(engine.sandbox, idempotencyKey)).toEqual([]);
        expect(await outbox.status(jobId)).toMatchObject({ state: 'delayed' });
        await engine.inTx((tx) => outbox.reschedule(jobId, { delayMs: 0 }, { tx }));
        const record = await outbox.waitFor(jobId, { timeoutMs: 15_000 });
        expect(engine.sandbox.message(record.id)?.bodyText).toBe('Order 6 shipped');
      }, 40_000);
    });
});

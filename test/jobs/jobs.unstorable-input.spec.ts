import { EmailValidationError } from '../../lib/index.js';
import type { EmailInput } from '../../lib/interfaces/email-input.interface.js';
import {
  ENGINES,
  ResolvedInsteadOfRejecting,
  errorOf,
  lookAlike,
  posts,
  sleep,
  templated,
  useEngine,
} from './jobs.support.js';

/**
 * API.md: a NUL inside the email is stored and sent unaltered; a `jobId` must be 1-256 characters without
 * control characters (NUL included) and without lone surrogates, refused with `EmailValidationError` on path
 * `jobId` before anything is written, so that the outbox's caller's transaction stays usable. PostgreSQL's
 * `jsonb` and `text` refuse NUL (and lone surrogates have no UTF-8 form): a raw database error here would abort
 * the app's transaction, which is what these specs rule out.
 */
const BAD_JOB_IDS: Array<[string, string]> = [
  ['a NUL', 'order\u0000:1'],
  ['a lone high surrogate', 'order:\ud800'],
  ['a lone low surrogate', '\udc00order'],
  ['a control character', 'order\u0007:1'],
  ['a line break', 'order\n1'],
  ['257 characters', 'x'.repeat(257)],
  ['nothing', ''],
];

const NUL_TEXT = 'Line one\u0000line two, after a NUL';

function pathsOf(err: unknown): string[] {
  return ((err as EmailValidationError).issues ?? []).map((i) => i.path);
}

describe.each(ENGINES)('input the %s store cannot hold as it is', (name) => {
  const engine = useEngine(name);

  it('a NUL in text and html is sent unaltered', async () => {
    const app = await engine.app();
    const input = { ...lookAlike(NUL_TEXT), html: '<p>a\u0000b</p>' };
    await app.jobs.send(input, { jobId: 'nul:text' });
    const record = await app.jobs.waitFor('nul:text', { timeoutMs: 15_000 });
    const stored = engine.sandbox.message(record.id);
    expect(stored?.bodyText).toBe(NUL_TEXT);
    expect(stored?.bodyText).toContain('\u0000');
    expect(stored?.html).toContain('a\u0000b');
    // the bytes the service received hold the NUL as JSON's \u0000, not a stripped or replaced character
    const post = engine.sandbox.requests().find((r) => r.method === 'POST' && /\/emails$/.test(r.path));
    expect(post?.body).toContain('\\u0000');
    expect((post?.json as { text?: string } | undefined)?.text).toBe(NUL_TEXT);
    expect((await app.jobs.status('nul:text'))?.record?.id).toBe(record.id);
  }, 30_000);

  it('a jobId with a NUL, a lone surrogate, a control character, 257 characters or none: EmailValidationError on jobId, nothing written', async () => {
    const app = await engine.app();
    for (const [what, jobId] of BAD_JOB_IDS) {
      const err = await errorOf(app.jobs.send(lookAlike('Hello'), { jobId }));
      expect([what, err instanceof EmailValidationError, pathsOf(err)]).toEqual([what, true, ['jobId']]);
      const many = await errorOf(
        app.jobs.sendMany([
          { input: lookAlike('Fine'), options: { jobId: 'fine:1' } },
          { input: lookAlike('Hello'), options: { jobId } },
        ]),
      );
      expect([what, many instanceof EmailValidationError, pathsOf(many)]).toEqual([
        what,
        true,
        ['[1].jobId'],
      ]);
      // nothing written: the good item of the refused sendMany is not a job either
      expect([what, await app.jobs.status('fine:1')]).toEqual([what, null]);
    }
    await sleep(500);
    expect(posts(engine.sandbox)).toEqual([]);
  }, 30_000);

  it('the longest id (256 characters), ":" and digit-only ids are taken', async () => {
    const app = await engine.app();
    const ids = ['y'.repeat(256), 'tenant:7:order:42', '12345', 'ünïcødé 🎉 order'];
    for (const [i, jobId] of ids.entries()) await app.jobs.send(lookAlike(`Edge ${i}`), { jobId });
    for (const [i, jobId] of ids.entries()) {
      const record = await app.jobs.waitFor(jobId, { timeoutMs: 15_000 });
      expect(engine.sandbox.message(record.id)?.bodyText).toBe(`Edge ${i}`);
      expect((await app.jobs.status(jobId))?.jobId).toBe(jobId);
    }
  }, 30_000);

  it('a lone surrogate in the email is EmailValidationError (the input rules), nothing written', async () => {
    const app = await engine.app();
    const err = await errorOf(app.jobs.send(lookAlike('broken \ud83d text'), { jobId: 'lone:text' }));
    expect(err).toBeInstanceOf(EmailValidationError);
    expect(pathsOf(err)).toContain('text');
    expect(await app.jobs.status('lone:text')).toBeNull();
  }, 30_000);

  it('a NUL anywhere else in the email is refused (EmailValidationError) or sent unaltered, never a store error', async () => {
    const app = await engine.app();
    const places: Array<[string, EmailInput]> = [
      ['subject', { ...lookAlike('Hello'), subject: 'Your\u0000order' }],
      ['variables', { ...templated('A\u00001'), variables: { order: 'A\u00001', name: 'Ada\u0000' } }],
      ['from', { ...lookAlike('Hello'), from: 'Shop\u0000 <shop@example.com>' }],
    ];
    for (const [i, [field, input]] of places.entries()) {
      const jobId = `nul:elsewhere:${i}`;
      const ref = `nul-elsewhere-${i}-${Math.random().toString(36).slice(2)}`;
      // the outbox: in an app transaction that writes its own row before and after; the queue: no transaction
      const sent =
        engine.name === 'outbox'
          ? await engine.inTx(async (tx) => {
              await tx.query('INSERT INTO orders (ref) VALUES ($1)', [ref]);
              const outcome = await errorOf(app.outbox!.send(input, { tx, jobId }));
              await tx.query('INSERT INTO orders (ref) VALUES ($1)', [`${ref}-after`]);
              return outcome;
            })
          : await errorOf(app.jobs.send(input, { jobId }));
      if (engine.name === 'outbox') {
        const { rows } = await engine.pool.query<{ n: string }>(
          'SELECT count(*) AS n FROM orders WHERE ref = $1 OR ref = $2',
          [ref, `${ref}-after`],
        );
        expect([field, 'committed rows', Number(rows[0]?.n)]).toEqual([field, 'committed rows', 2]);
      }
      if (!(sent instanceof ResolvedInsteadOfRejecting)) {
        // refused: only by the input rules, naming the field
        expect([field, (sent as Error).name]).toEqual([field, 'EmailValidationError']);
        expect([
          field,
          (sent as EmailValidationError).issues?.some((issue) => issue.path.startsWith(field)),
        ]).toEqual([field, true]);
        continue;
      }
      await app.jobs.waitFor(jobId, { timeoutMs: 15_000 });
      const post = engine.sandbox
        .requests()
        .find((r) => r.method === 'POST' && r.headers['idempotency-key'] === app.jobs.keyFor(jobId));
      const json = post?.json as Record<string, unknown> | undefined;
      expect([field, json?.[field]]).toEqual([field, (input as unknown as Record<string, unknown>)[field]]);
    }
  }, 60_000);

  // the outbox only: the app's own transaction around the send
  if (name === 'outbox')
    describe('inside the app transaction', () => {
      const orders = async (ref: string) =>
        Number((await engine.pool.query('SELECT count(*) AS n FROM orders WHERE ref = $1', [ref])).rows[0].n);

      it('a NUL in text is enqueued in the app transaction, which commits its own row, and is sent unaltered', async () => {
        const app = await engine.app();
        const outbox = app.outbox!;
        await engine.inTx(async (tx) => {
          await tx.query('INSERT INTO orders (ref) VALUES ($1)', ['nul-order']);
          await outbox.send(lookAlike(NUL_TEXT), { tx, jobId: 'nul:order' });
          await tx.query('INSERT INTO orders (ref) VALUES ($1)', ['nul-order-after']);
        });
        expect(await orders('nul-order')).toBe(1);
        expect(await orders('nul-order-after')).toBe(1);
        const record = await outbox.waitFor('nul:order', { timeoutMs: 15_000 });
        expect(engine.sandbox.message(record.id)?.bodyText).toBe(NUL_TEXT);
      }, 30_000);

      it('a bad jobId is refused before the transaction is touched: the transaction still commits', async () => {
        const app = await engine.app();
        const outbox = app.outbox!;
        for (const [what, jobId] of BAD_JOB_IDS) {
          const ref = `bad-id-${Math.random().toString(36).slice(2)}`;
          const err = await engine.inTx(async (tx) => {
            await tx.query('INSERT INTO orders (ref) VALUES ($1)', [ref]);
            const refused = await errorOf(outbox.send(lookAlike('Hello'), { tx, jobId }));
            // the transaction is not aborted: a further statement runs, and COMMIT keeps both rows
            await tx.query('INSERT INTO orders (ref) VALUES ($1)', [`${ref}-after`]);
            return refused;
          });
          expect([what, err instanceof EmailValidationError, pathsOf(err)]).toEqual([what, true, ['jobId']]);
          expect([what, await orders(ref), await orders(`${ref}-after`)]).toEqual([what, 1, 1]);
        }
        await sleep(500);
        expect(posts(engine.sandbox)).toEqual([]);
      }, 30_000);

      it('a lone surrogate in the email, in the app transaction: refused, the transaction commits', async () => {
        const app = await engine.app();
        const outbox = app.outbox!;
        const err = await engine.inTx(async (tx) => {
          await tx.query('INSERT INTO orders (ref) VALUES ($1)', ['lone-order']);
          const refused = await errorOf(outbox.send(lookAlike('broken \udfff'), { tx, jobId: 'lone:order' }));
          await tx.query('INSERT INTO orders (ref) VALUES ($1)', ['lone-order-after']);
          return refused;
        });
        expect(err).toBeInstanceOf(EmailValidationError);
        expect(await orders('lone-order')).toBe(1);
        expect(await orders('lone-order-after')).toBe(1);
      }, 30_000);
    });
});

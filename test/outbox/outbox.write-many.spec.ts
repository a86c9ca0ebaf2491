// A sendMany is written in one statement, whatever its size: pg-boss's own `insert` of its jobs (each job's record
// its data), which also wakes the workers. What each job promised before holds: one job and one email per job id,
// the same pg-boss job as a single send writes, a job id already kept answered as it is, nothing written when
// pg-boss cannot take the jobs.
import { EmailJobConflictError, type EmailOutboxOptions } from '../../lib/outbox/index.js';
import { lookAlike, SANDBOX_OPTIONS, templated } from '../jobs/jobs.support.js';
import {
  freshSchema,
  inTransaction,
  outboxApp,
  posts,
  settle,
  useOutboxWorld,
  workerLooked,
} from './outbox.support.js';

const world = useOutboxWorld(SANDBOX_OPTIONS);
const NUL_TEXT = 'A NUL \u0000, "quotes", a \\ backslash, ünïcödé and 📦';

describe('EmailOutbox.sendMany, written in one statement (real PostgreSQL)', () => {
  const schema = freshSchema();
  let app: Awaited<ReturnType<typeof outboxApp>>;
  const open = (options: Partial<EmailOutboxOptions> = {}) =>
    outboxApp(world.sandbox, { connection: world.postgres.url, schema, concurrency: 4, ...options });

  beforeAll(async () => {
    app = await open();
  }, 30_000);
  afterAll(() => app?.close());

  /** The pg-boss jobs of the queue, by job id. */
  async function engineJobs(): Promise<Map<string, Record<string, unknown>>> {
    const { rows } = await world.pool.query(
      `SELECT data->>'jobId' AS job_id, id::text AS id, retry_limit, retry_delay, ` +
        `extract(epoch FROM expire_in)::int AS expire_s, start_after > now() + interval '1 second' AS later ` +
        `FROM "${schema}".job WHERE name = 'email'`,
    );
    return new Map(rows.map((r: Record<string, unknown>) => [String(r.job_id), r]));
  }

  it('look-alike, identical, template and inline mail, a NUL and a delayed job in one call: each job id sent once', async () => {
    const items = [
      { input: lookAlike('Body A'), options: { jobId: 'many:a' } },
      { input: lookAlike('Body B'), options: { jobId: 'many:b' } },
      { input: lookAlike('Body A'), options: { jobId: 'many:a-again' } }, // identical mail, its own job
      { input: templated('1001'), options: { jobId: 'many:t1' } },
      { input: templated('1002'), options: { jobId: 'many:t2' } },
      { input: lookAlike(NUL_TEXT), options: { jobId: 'many:nul' } },
      { input: lookAlike('Later'), options: { jobId: 'many:later', delayMs: 3000 } },
    ];
    const receipts = await inTransaction(world.pool, (client) => app.outbox.sendMany(items, { tx: client }));
    expect(receipts.map((r) => r.jobId)).toEqual(items.map((i) => i.options.jobId));
    expect(new Set(receipts.map((r) => r.idempotencyKey)).size).toBe(items.length);

    // The same pg-boss job a single send writes: retried by the record, expiring with the attempt, due at once
    // or at its delay.
    const single = await app.outbox.send(lookAlike('Single'), { jobId: 'many:single' });
    const jobs = await engineJobs();
    expect([...jobs.keys()].sort()).toEqual([...items.map((i) => i.options.jobId), single.jobId].sort());
    const shape = (j: Record<string, unknown> | undefined) => ({
      retry_limit: j?.retry_limit,
      retry_delay: j?.retry_delay,
      expire_s: j?.expire_s,
    });
    for (const id of jobs.keys()) expect(shape(jobs.get(id))).toEqual(shape(jobs.get('many:single')));
    expect([...jobs].filter(([, j]) => j.later).map(([id]) => id)).toEqual(['many:later']);
    expect(new Set([...jobs.values()].map((j) => j.id)).size).toBe(jobs.size);

    for (const { options } of items) await app.outbox.waitFor(options.jobId, { timeoutMs: 20_000 });
    const bodies = world.sandbox
      .messages()
      .map((m) => m.bodyText)
      .sort();
    expect(bodies).toEqual(
      [
        'Body A',
        'Body A',
        'Body B',
        'Later',
        'Order 1001 is on its way, Ada',
        'Order 1002 is on its way, Ada',
        NUL_TEXT,
        'Single',
      ].sort(),
    );
    const keys = posts(world.sandbox).map((p) => p.key);
    expect(new Set(keys).size).toBe(keys.length);
    // Its record is its pg-boss job, whose data (jsonb) cannot hold a NUL in a string: it is kept as its JSON text
    // beside its job id, the input as written, NUL, quotes, backslash and all; status reads it back.
    const { rows } = await world.pool.query(
      `SELECT data, state::text AS state FROM "${schema}".job WHERE data->>'jobId' = 'many:nul'`,
    );
    expect(rows[0]).toMatchObject({ state: 'completed', data: { jobId: 'many:nul' } });
    const stored = JSON.parse(String(rows[0].data.json)) as { input: { text: string } };
    expect(stored).toMatchObject({ input: { text: NUL_TEXT } });
    expect(await app.outbox.status('many:nul')).toMatchObject({ state: 'sent', attempts: 1 });
  }, 60_000);

  it('the same job id twice in one call: one job and one email for the same input; another input is refused by id', async () => {
    const [first, second] = await inTransaction(world.pool, (client) =>
      app.outbox.sendMany(
        [
          { input: lookAlike('Twice'), options: { jobId: 'dup:same' } },
          { input: lookAlike('Twice'), options: { jobId: 'dup:same' } },
        ],
        { tx: client },
      ),
    );
    expect(second).toEqual(first);

    // Without a tx the outbox commits its own transaction: the first item of the id and the other job are written.
    const err = (await app.outbox
      .sendMany([
        { input: lookAlike('One'), options: { jobId: 'dup:other' } },
        { input: lookAlike('Two'), options: { jobId: 'dup:other' } },
        { input: templated('3'), options: { jobId: 'dup:third' } },
      ])
      .catch((e: unknown) => e)) as EmailJobConflictError;
    expect(err).toBeInstanceOf(EmailJobConflictError);
    expect(err.jobIds).toEqual(['dup:other']);

    for (const id of ['dup:same', 'dup:other', 'dup:third'])
      await app.outbox.waitFor(id, { timeoutMs: 20_000 });
    await workerLooked(app.moduleRef);
    const bodies = world.sandbox
      .messages()
      .map((m) => m.bodyText)
      .sort();
    expect(bodies).toEqual(['One', 'Order 3 is on its way, Ada', 'Twice']);
    expect((await engineJobs()).get('dup:same')).toBeDefined();
  }, 60_000);

  it('two calls writing the same job ids in other orders at once wait for each other: no deadlock, one email each', async () => {
    const [first, second] = [await world.pool.connect(), await world.pool.connect()];
    try {
      await first.query('BEGIN');
      await second.query('BEGIN');
      await app.outbox.sendMany([{ input: lookAlike('X'), options: { jobId: 'order:x' } }], { tx: first });
      // The second call lists y before x: written in that order it would hold y while it waits for x.
      const late = app.outbox.sendMany(
        [
          { input: lookAlike('Y'), options: { jobId: 'order:y' } },
          { input: lookAlike('X'), options: { jobId: 'order:x' } },
        ],
        { tx: second },
      );
      await settle(300);
      await app.outbox.sendMany([{ input: lookAlike('Y'), options: { jobId: 'order:y' } }], { tx: first });
      await first.query('COMMIT');
      const answers = await late;
      await second.query('COMMIT');
      expect(answers.map((a) => a.jobId)).toEqual(['order:y', 'order:x']);
    } finally {
      first.release();
      second.release();
    }
    for (const id of ['order:x', 'order:y']) await app.outbox.waitFor(id, { timeoutMs: 20_000 });
    await workerLooked(app.moduleRef);
    expect(
      world.sandbox
        .messages()
        .map((m) => m.bodyText)
        .sort(),
    ).toEqual(['X', 'Y']);
  }, 60_000);

  it('a job id kept from an earlier call is answered as it is beside new ones: no second job, no second email', async () => {
    const [kept] = await app.outbox.sendMany([
      { input: lookAlike('Kept'), options: { jobId: 'again:kept' } },
    ]);
    await app.outbox.waitFor('again:kept', { timeoutMs: 20_000 });
    const before = (await engineJobs()).get('again:kept');
    const answers = await inTransaction(world.pool, (client) =>
      app.outbox.sendMany(
        [
          { input: lookAlike('New 1'), options: { jobId: 'again:new-1' } },
          { input: lookAlike('Kept'), options: { jobId: 'again:kept' } },
          { input: lookAlike('New 2'), options: { jobId: 'again:new-2' } },
        ],
        { tx: client },
      ),
    );
    expect(answers[1]).toEqual(kept);
    for (const id of ['again:new-1', 'again:new-2']) await app.outbox.waitFor(id, { timeoutMs: 20_000 });
    await workerLooked(app.moduleRef);
    expect((await engineJobs()).get('again:kept')).toEqual(before);
    expect(
      world.sandbox
        .messages()
        .map((m) => m.bodyText)
        .sort(),
    ).toEqual(['Kept', 'New 1', 'New 2']);
  }, 60_000);
});

describe('EmailOutbox.sendMany when pg-boss cannot take the jobs (its queue is gone)', () => {
  it('fails naming the queue and the jobs; in the caller transaction or its own, nothing is kept or sent', async () => {
    const schema = freshSchema();
    const app = await outboxApp(world.sandbox, { connection: world.postgres.url, schema });
    try {
      await world.pool.query(`DELETE FROM "${schema}".queue WHERE name = 'email'`);
      const items = [
        { input: lookAlike('Lost 1'), options: { jobId: 'gone:1' } },
        { input: templated('2'), options: { jobId: 'gone:2' } },
      ];
      const inTx = await inTransaction(world.pool, (client) =>
        app.outbox.sendMany(items, { tx: client }),
      ).catch((e: unknown) => e);
      expect(String(inTx)).toMatch(
        /pg-boss wrote 0 of 2 jobs \(gone:1, gone:2\) in queue email .*queue exist/,
      );
      // A client that answers rows only (Prisma's raw queries): the ids pg-boss wrote are its answer too.
      const rowsOnly = await inTransaction(world.pool, (client) => {
        const tx = {
          $queryRawUnsafe: async (text: string, ...values: unknown[]) =>
            (await client.query(text, values)).rows,
        };
        return app.outbox.sendMany(items, { tx });
      }).catch((e: unknown) => e);
      expect(String(rowsOnly)).toMatch(/pg-boss wrote 0 of 2 jobs \(gone:1, gone:2\) in queue email/);
      const alone = await app.outbox.send(lookAlike('Lost 3'), { jobId: 'gone:3' }).catch((e: unknown) => e);
      expect(String(alone)).toMatch(/pg-boss wrote 0 of 1 jobs \(gone:3\) in queue email/);
      // A large call names its first ten job ids and counts the rest.
      const twelve = Array.from({ length: 12 }, (_, i) => ({
        input: lookAlike(`Lost ${i}`),
        options: { jobId: `gone:many-${String(i).padStart(2, '0')}` },
      }));
      const large = await app.outbox.sendMany(twelve).catch((e: unknown) => e);
      expect(String(large)).toMatch(/wrote 0 of 12 jobs \(gone:many-00, .*, gone:many-09 and 2 more\)/);
      for (const id of ['gone:1', 'gone:2', 'gone:3', 'gone:many-11'])
        expect(await app.outbox.status(id)).toBeNull();
      await workerLooked(app.moduleRef);
      expect(posts(world.sandbox)).toEqual([]);
    } finally {
      await app.close();
    }
  }, 60_000);
});

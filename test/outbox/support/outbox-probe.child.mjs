// One outbox app (producer and worker) run through a fixed scenario, for the spec that runs the outbox on
// another pg-boss major: the library at <lib dir URL> resolves its own `pg-boss`. Plain Node with the
// TypeScript hooks:
//   node outbox-probe.child.mjs <lib dir URL> <ext>   with env DATABASE_URL, EMAIL_BASE_URL, EMAIL_API_KEY,
//   OUTBOX_SCHEMA.
// Prints one JSON line per step ({ step, ... }) and exits 0; any failure is printed and exits 1.
import 'reflect-metadata';
import { createRequire } from 'node:module';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import pg from 'pg';

const [libUrl, ext = 'ts'] = process.argv.slice(2);
const lib = await import(`${libUrl}/index.${ext}`);
const outboxLib = await import(`${libUrl}/outbox/index.${ext}`);
const env = process.env;
const print = (step, data = {}) => process.stdout.write(`${JSON.stringify({ step, ...data })}\n`);

try {
  const bossPackage = createRequire(new URL(`${libUrl}/index.${ext}`))('pg-boss/package.json');
  print('pg-boss', { version: bossPackage.version });

  class ProbeApp {}
  Module({
    imports: [
      lib.EmailModule.forRoot({ apiKey: env.EMAIL_API_KEY, baseUrl: env.EMAIL_BASE_URL, logger: false }),
      outboxLib.EmailOutboxModule.forRoot({
        connection: env.DATABASE_URL,
        schema: env.OUTBOX_SCHEMA,
        pollingIntervalMs: 500,
        maintenanceIntervalMs: 1000,
        backoff: { delayMs: 500, maxDelayMs: 500 },
      }),
    ],
  })(ProbeApp);
  const app = await NestFactory.createApplicationContext(ProbeApp, { logger: false });
  const outbox = app.get(outboxLib.EmailOutbox);
  const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: 2 });
  const inTx = async (work, commit = true) => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query(commit ? 'COMMIT' : 'ROLLBACK');
      return result;
    } finally {
      client.release();
    }
  };
  const lookAlike = (text) => ({
    from: 'shop@example.com',
    to: ['ada@example.com'],
    subject: 'Your order',
    text,
  });
  const templated = (order) => ({
    from: 'shop@example.com',
    to: ['ada@example.com'],
    templateId: 7,
    variables: { order, name: 'Ada' },
  });

  // Look-alike, identical and template mail, a delayed job and a job id given twice, in one transaction.
  const receipts = await inTx((tx) =>
    outbox.sendMany(
      [
        { input: lookAlike('Body A'), options: { jobId: 'p:a' } },
        { input: lookAlike('Body B'), options: { jobId: 'p:b' } },
        { input: lookAlike('Body A'), options: { jobId: 'p:a-again' } },
        { input: templated('11'), options: { jobId: 'p:t' } },
        { input: lookAlike('Later'), options: { jobId: 'p:later', delayMs: 1500 } },
        { input: lookAlike('Body A'), options: { jobId: 'p:a' } },
      ],
      { tx },
    ),
  );
  print('written', {
    jobIds: receipts.map((r) => r.jobId),
    sameKeyTwice: receipts[0].idempotencyKey === receipts[5].idempotencyKey,
  });
  // A rolled-back transaction writes nothing.
  await inTx(
    (tx) => outbox.sendMany([{ input: lookAlike('Rolled back'), options: { jobId: 'p:rolled' } }], { tx }),
    false,
  );
  const sent = {};
  for (const jobId of ['p:a', 'p:b', 'p:a-again', 'p:t', 'p:later'])
    sent[jobId] = (await outbox.waitFor(jobId, { timeoutMs: 20_000 })).id;
  print('sent', { sent, rolledBack: await outbox.status('p:rolled') });
  // A job for later: moved, then cancelled, in a transaction.
  await outbox.send(lookAlike('Far'), { jobId: 'p:far', delayMs: 60_000 });
  const moved = await inTx((tx) => outbox.reschedule('p:far', { delayMs: 30_000 }, { tx }));
  const cancelled = await inTx((tx) => outbox.cancel('p:far', { tx }));
  print('later', { moved, cancelled, state: (await outbox.status('p:far')).state });
  const { rows } = await pool.query(
    `SELECT i.indexname FROM pg_indexes i WHERE i.schemaname = $1 AND i.indexname LIKE '%email_fetch'`,
    [env.OUTBOX_SCHEMA],
  );
  print('index', { names: rows.map((r) => r.indexname) });
  await pool.end();
  await app.close();
  print('done');
  process.exit(0);
} catch (err) {
  print('error', { message: String(err?.stack ?? err) });
  process.exit(1);
}

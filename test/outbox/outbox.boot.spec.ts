import { EmailOptionsError } from '../../lib/index.js';
import { EmailOutboxUnavailableError, type EmailOutboxOptions } from '../../lib/outbox/index.js';
import { resolveEmailOutboxOptions } from '../../lib/outbox/email-outbox.options.js';
import { EmailSandbox } from '../../lib/testing/index.js';
import { startPostgres } from '../support/postgres-server.mjs';
import { outboxApp } from './outbox.support.js';

describe('EmailOutboxModule options and a database that is down', () => {
  it('bad options fail at boot, naming each', () => {
    const bad = {
      connection: 'mysql://nope',
      schema: '1bad-name',
      concurrency: 0,
      attempts: 1.5,
      pollingIntervalMs: 10,
      attemptTimeoutMs: -1,
      worker: 'yes',
    } as unknown as EmailOutboxOptions;
    let error: unknown;
    try {
      resolveEmailOutboxOptions(bad);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(EmailOptionsError);
    const { problems } = error as EmailOptionsError;
    for (const name of [
      'connection',
      'schema',
      'concurrency',
      'attempts',
      'pollingIntervalMs',
      'attemptTimeoutMs',
      'worker',
    ])
      expect(problems.some((p) => p.includes(`EmailOutboxModule: ${name} `))).toBe(true);
    expect(() => resolveEmailOutboxOptions(undefined)).toThrow(/connection is required/);
  });

  it('bad options fail the Nest boot too', async () => {
    const sandbox = await EmailSandbox.start();
    try {
      await expect(
        outboxApp(sandbox, { connection: 'postgres://x@127.0.0.1:1/db', concurrency: -1 }),
      ).rejects.toThrow(/concurrency must be an integer/);
    } finally {
      await sandbox.close();
    }
  });

  it('a database that is down: a clear error at boot, without the password', async () => {
    const sandbox = await EmailSandbox.start();
    try {
      const boot = outboxApp(sandbox, { connection: 'postgres://app:s3cret-pw@127.0.0.1:1/shop' });
      await expect(boot).rejects.toBeInstanceOf(EmailOutboxUnavailableError);
      await expect(boot).rejects.toThrow(
        /cannot reach PostgreSQL: 127\.0\.0\.1:1\/shop did not answer at boot: .*\(ECONNREFUSED\)/,
      );
      await boot.catch((err: Error) =>
        expect(`${err.message} ${JSON.stringify(err)}`).not.toContain('s3cret-pw'),
      );
    } finally {
      await sandbox.close();
    }
  }, 30_000);

  it('health: up with latency and backlog; down (unreachable) while the database is down', async () => {
    if (process.env.DATABASE_URL) return; // needs a private server it can stop
    const postgres = await startPostgres();
    const sandbox = await EmailSandbox.start();
    const app = await outboxApp(sandbox, { connection: postgres.url, worker: false });
    try {
      const { EmailOutboxHealthIndicator } = await import('../../lib/outbox/index.js');
      const health = app.moduleRef.get(EmailOutboxHealthIndicator);
      expect(await health.isHealthy()).toMatchObject({ 'email-outbox': { status: 'up', backlog: 0 } });
      await postgres.kill();
      const down = await health.isHealthy('email-outbox', { timeoutMs: 3000 });
      expect(down).toMatchObject({ 'email-outbox': { status: 'down', reason: 'unreachable' } });
      expect(down['email-outbox'].message).toMatch(/PostgreSQL/);
      await postgres.restart();
      // up again once the pool reconnects: looked for until it is, or the test's timeout (10 s of tries was
      // a window a busy machine could outlast)
      let up = false;
      while (!up) {
        up = (await health.isHealthy())['email-outbox'].status === 'up';
        if (!up) await new Promise((r) => setTimeout(r, 250));
      }
      expect(up).toBe(true);
    } finally {
      await app.close();
      await sandbox.close();
      await postgres.stop();
    }
  }, 60_000);
});

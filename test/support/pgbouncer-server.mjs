// Plain JavaScript, so that the specs (through pgbouncer-server.d.mts), the chaos run and the benches share it.
// A private PgBouncer (Debian's `pgbouncer`) in front of one PostgreSQL, in a temporary directory.
import { spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acceptsOn, freePort, runAs, systemBin } from './postgres-server.mjs';

/**
 * Starts PgBouncer on a free 127.0.0.1 port in front of the PostgreSQL at `target` (a private server's
 * `postgres://postgres@127.0.0.1:<port>/<db>`), with two databases: `transaction` (pool_mode=transaction: a
 * server connection per transaction, shared by the clients) and `session` (pool_mode=session: one per client
 * connection), both reaching the target's database. Trust authentication for the users named (`postgres`
 * and `options.users`), `poolSize` server connections per database and user (default 4), as the `postgres` OS
 * user when running as root (PgBouncer refuses root). Or, with PGBOUNCER_TRANSACTION_URL and
 * PGBOUNCER_SESSION_URL set, those two (then `stop` does nothing).
 * @param {string} target
 * @param {{ poolSize?: number, users?: string[] }} [options]
 */
export async function startPgBouncer(target, options = {}) {
  const { PGBOUNCER_TRANSACTION_URL: transactionUrl, PGBOUNCER_SESSION_URL: sessionUrl } = process.env;
  if (transactionUrl && sessionUrl)
    return { transactionUrl, sessionUrl, stop: async () => undefined, log: () => '' };
  const bin = systemBin('pgbouncer');
  if (!bin)
    throw new Error(
      'PgBouncer is not installed: apt-get install pgbouncer, or set PGBOUNCER_TRANSACTION_URL and PGBOUNCER_SESSION_URL',
    );
  const server = new URL(target);
  const user = runAs();
  const dir = mkdtempSync(join(tmpdir(), 'email-pgbouncer-'));
  if (user) chownSync(dir, user.uid, user.gid);
  const port = await freePort();
  const users = ['postgres', ...(options.users ?? [])];
  const to = `host=${server.hostname} port=${server.port || 5432} dbname=${server.pathname.slice(1) || 'postgres'}`;
  writeFileSync(join(dir, 'users.txt'), users.map((u) => `"${u}" ""\n`).join(''));
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `transaction = ${to} pool_mode=transaction`,
      `session = ${to} pool_mode=session`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      `default_pool_size = ${options.poolSize ?? 4}`,
      'max_client_conn = 1000',
      'admin_users = postgres',
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      `pidfile = ${join(dir, 'pgbouncer.pid')}`,
      '',
    ].join('\n'),
  );
  if (user) for (const f of ['users.txt', 'pgbouncer.ini']) chownSync(join(dir, f), user.uid, user.gid);
  const proc = spawn(bin, [join(dir, 'pgbouncer.ini')], {
    ...(user ? { uid: user.uid, gid: user.gid } : {}),
    cwd: dir,
    stdio: 'ignore',
  });
  let exited = false;
  const orphaned = () => proc.kill('SIGKILL'); // the caller crashed before stop(): no server left behind
  process.once('exit', orphaned);
  proc.once('exit', () => {
    exited = true;
    process.off('exit', orphaned);
  });
  const log = () => {
    const file = join(dir, 'pgbouncer.log');
    return existsSync(file) ? readFileSync(file, 'utf8') : '';
  };
  const stop = async () => {
    if (!exited) {
      const gone = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGINT');
      await gone;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 10_000;
  while (!(await acceptsOn(port))) {
    if (exited || Date.now() > deadline) {
      const why = log().trim().split('\n').slice(-3).join(' | ');
      await stop();
      throw new Error(`pgbouncer did not start on 127.0.0.1:${port}: ${why || 'no log'}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  const url = (db, name = 'postgres') => `postgres://${name}@127.0.0.1:${port}/${db}`;
  return {
    port,
    transactionUrl: url('transaction'),
    sessionUrl: url('session'),
    /** The pooler's own console (SHOW POOLS, SHOW SERVERS), as its admin user. */
    adminUrl: url('pgbouncer'),
    url,
    stop,
    log,
  };
}

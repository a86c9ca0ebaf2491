// Plain JavaScript, so that the specs (through haproxy-server.d.mts), the chaos run and the benches share it.
// A private HAProxy (Debian's `haproxy`) in TCP mode in front of PostgreSQL servers, sending each new
// connection to the one whose health check says it is the primary, as Patroni's documented HAProxy set-up does.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { acceptsOn, freePort, systemBin } from './postgres-server.mjs';

/**
 * An HTTP check of one PostgreSQL server, as Patroni's REST API answers HAProxy: `GET /primary` is 200 while the
 * server takes writes (`pg_is_in_recovery()` is false), 503 otherwise (a standby, or no answer within 2 s). It asks
 * on one connection that it keeps, as Patroni does, and opens again once that connection failed (a crash ends it
 * at once, so the next check says 503): a new connection for each check, ten a second, could not be had within the
 * check's time on a machine at load 20, and HAProxy then cut the primary's sessions for a failover that was not one.
 * @param {number} pgPort
 */
async function startPrimaryCheck(pgPort) {
  /** @type {Promise<pg.Client> | undefined} */
  let kept;
  const connected = () => {
    if (kept) return kept;
    const client = new pg.Client({
      host: '127.0.0.1',
      port: pgPort,
      user: 'postgres',
      database: 'postgres',
      connectionTimeoutMillis: 2000,
      query_timeout: 2000,
    });
    const forget = () => {
      if (kept === opening) kept = undefined;
      client.end().catch(() => undefined);
    };
    client.on('error', forget);
    client.on('end', forget);
    const opening = client.connect().then(() => client);
    opening.catch(forget);
    kept = opening;
    return opening;
  };
  /** One check at a time on the kept connection. */
  let queue = Promise.resolve();
  const server = createHttpServer((req, res) => {
    const answer = (status) => {
      if (!res.headersSent) res.writeHead(status).end();
    };
    queue = queue.then(() =>
      connected()
        .then((client) => client.query('SELECT pg_is_in_recovery() AS standby'))
        .then(({ rows }) => answer(rows[0]?.standby === false ? 200 : 503))
        .catch(() => {
          const failed = kept;
          kept = undefined;
          failed?.then((c) => c.end()).catch(() => undefined);
          answer(503);
        }),
    );
  });
  const port = await freePort();
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port,
    close: async () => {
      await new Promise((resolve) => server.close(() => resolve(undefined)));
      await kept?.then((c) => c.end()).catch(() => undefined);
    },
  };
}

/**
 * One command on HAProxy's stats socket at `path`, and its answer.
 * @param {string} path @param {string} command @returns {Promise<string>}
 */
function askSocket(path, command) {
  return new Promise((resolve, reject) => {
    const sock = connect(path);
    let answer = '';
    sock.setEncoding('utf8');
    sock.once('connect', () => sock.end(`${command}\n`));
    sock.on('data', (chunk) => (answer += chunk));
    sock.once('end', () => resolve(answer));
    sock.once('error', reject);
  });
}

/**
 * Starts HAProxy on a free 127.0.0.1 port in front of the PostgreSQL servers on `pgPorts`: TCP mode, each new
 * connection to the server whose check (every `checkMs`, 100 by default) says it is the primary; when three checks
 * of a server fail in a row, HAProxy closes the connections it holds to it (`on-marked-down shutdown-sessions`). While no
 * server passes, a connection is closed after `timeout queue` (1 s). `states()` answers HAProxy's own view of each
 * server, by PostgreSQL port (`UP`, `DOWN`, `UP 1/3` while going down, ...): at start every server is UP until its
 * first check, so a connection made then may reach a standby and be cut when that check fails. `stop` ends
 * HAProxy and the checks.
 * @param {number[]} pgPorts
 * @param {{ checkMs?: number }} [options]
 */
export async function startHaproxy(pgPorts, options = {}) {
  const bin = systemBin('haproxy');
  if (!bin) throw new Error('HAProxy is not installed: apt-get install haproxy');
  const checks = await Promise.all(pgPorts.map(startPrimaryCheck));
  const dir = mkdtempSync(join(tmpdir(), 'email-haproxy-'));
  const port = await freePort();
  const inter = options.checkMs ?? 100;
  writeFileSync(
    join(dir, 'haproxy.cfg'),
    [
      'global',
      '  maxconn 2000',
      `  stats socket ${join(dir, 'admin.sock')} level user`,
      'defaults',
      '  mode tcp',
      '  timeout connect 1s',
      '  timeout queue 1s',
      '  timeout client 1h',
      '  timeout server 1h',
      '  timeout check 3s',
      'listen postgres',
      `  bind 127.0.0.1:${port}`,
      '  option httpchk GET /primary',
      '  http-check expect status 200',
      // 3 failed checks in a row mark a server down (a check slowed by a loaded machine is not a failover), 1 up
      `  default-server inter ${inter}ms fastinter ${inter}ms downinter ${inter}ms fall 3 rise 1 on-marked-down shutdown-sessions`,
      ...pgPorts.map((p, i) => `  server pg${i} 127.0.0.1:${p} check port ${checks[i].port}`),
      '',
    ].join('\n'),
  );
  const proc = spawn(bin, ['-db', '-f', join(dir, 'haproxy.cfg')], { cwd: dir, stdio: 'ignore' });
  let exited = false;
  const orphaned = () => proc.kill('SIGKILL'); // the caller crashed before stop(): no proxy left behind
  process.once('exit', orphaned);
  proc.once('exit', () => {
    exited = true;
    process.off('exit', orphaned);
  });
  const stop = async () => {
    if (!exited) {
      const gone = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGKILL');
      await gone;
    }
    await Promise.all(checks.map((c) => c.close()));
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 10_000;
  while (!(await acceptsOn(port))) {
    if (exited || Date.now() > deadline) {
      await stop();
      throw new Error(`haproxy did not start on 127.0.0.1:${port}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  const states = async () => {
    const csv = await askSocket(join(dir, 'admin.sock'), 'show stat');
    const [head, ...rows] = csv.trim().split('\n');
    const columns = head.replace(/^# /, '').split(',');
    const [name, status] = [columns.indexOf('svname'), columns.indexOf('status')];
    /** @type {Record<number, string>} */
    const byPort = {};
    for (const row of rows.map((r) => r.split(','))) {
      const i = pgPorts.findIndex((_, n) => row[name] === `pg${n}`);
      if (i >= 0) byPort[pgPorts[i]] = row[status];
    }
    return byPort;
  };
  return { port, url: `postgres://postgres@127.0.0.1:${port}/postgres`, states, stop };
}

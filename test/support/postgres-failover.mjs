// Plain JavaScript, so that the specs (through postgres-failover.d.mts), the chaos run and the benches share it.
// A primary with a streaming standby (two private PostgreSQL servers, the standby made with pg_basebackup -R),
// and HAProxy in front as the one address the app is given: the topology a failover is made in.
import process from 'node:process';
import pg from 'pg';
import { startHaproxy } from './haproxy-server.mjs';
import { startPostgres } from './postgres-server.mjs';

/** Settings of both nodes: commits durable on the node itself (`synchronous_commit`), WAL for a standby. */
const NODE_SETTINGS = { synchronous_commit: 'on', wal_level: 'replica', max_wal_senders: 4 };

/** @param {string} url @param {string} text @param {unknown[]} [values] */
async function queryOnce(url, text, values = []) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.query(text, values)).rows;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Polls `check` every 25 ms until it is true, or throws naming `what` after `ms`. */
async function until(check, ms, what) {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`postgres failover topology: ${what} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Starts a primary and its streaming standby (private PostgreSQL servers on free ports, fsync off) and HAProxy in
 * front (`url`, the address to give the app). `synchronous` (default true): the primary's commits wait until the
 * standby has flushed them (`synchronous_standby_names = '*'`, `synchronous_commit = on`); false: they do not
 * (asynchronous streaming). The result can:
 * - `failover({ beforePromote })`: crash the primary (SIGKILL of every process: a machine that dies), run
 *   `beforePromote` (while there is no primary at all), promote the standby (`pg_ctl promote`), make it a primary
 *   with no standby to wait for (as Patroni does when none is left), and resolve once HAProxy sends new
 *   connections to it;
 * - `rejoin({ synchronous })`: bring the crashed node back as a standby of the new primary (its directory
 *   replaced by a `pg_basebackup` of it, on its old port, so HAProxy finds it), ready for another failover;
 * - `holdReplication()`: freeze the primary's WAL senders (SIGSTOP): its commits reach no standby until the
 *   returned function thaws them (with asynchronous replication; a synchronous commit would wait);
 * - `stop()`: everything, directories included.
 * A private topology always: it needs to kill and promote servers (DATABASE_URL is not used).
 * @param {{ synchronous?: boolean, settings?: Record<string, string | number> }} [options]
 */
export async function startFailoverTopology(options = {}) {
  const settings = { ...NODE_SETTINGS, ...options.settings };
  const started = [];
  let proxy;
  try {
    let primary = await startPostgres({ settings });
    started.push(primary);
    await setSynchronous(primary, options.synchronous !== false);
    let standby = await startPostgres({ settings, standbyOf: primary.port });
    started.push(standby);
    await streaming(primary);
    proxy = await startHaproxy([primary.port, standby.port]);
    await routed(proxy, primary.port);
    let failovers = 0;
    return {
      url: proxy.url,
      get primary() {
        return primary;
      },
      get standby() {
        return standby;
      },
      get failovers() {
        return failovers;
      },
      async failover(failoverOptions = {}) {
        await primary.crash();
        // the window a real failover has between the two (a Patroni loop, a DNS TTL): no primary at all
        await failoverOptions.beforePromote?.();
        standby.promote();
        // The promoted node waits for no standby (it has none yet): its commits go on.
        await queryOnce(standby.url, 'ALTER SYSTEM RESET synchronous_standby_names');
        await queryOnce(standby.url, 'SELECT pg_reload_conf()');
        [primary, standby] = [standby, primary];
        failovers += 1;
        await routed(proxy, primary.port);
      },
      async rejoin(rejoinOptions = {}) {
        const port = standby.port;
        await standby.stop();
        started.splice(started.indexOf(standby), 1);
        await setSynchronous(primary, rejoinOptions.synchronous !== false);
        standby = await startPostgres({ settings, standbyOf: primary.port, port });
        started.push(standby);
        await streaming(primary);
        await routed(proxy, primary.port); // the rejoined node's check settled: HAProxy sends to the primary only
      },
      async holdReplication() {
        const rows = await queryOnce(primary.url, 'SELECT pid FROM pg_stat_replication');
        const pids = rows.map((r) => Number(r.pid));
        for (const pid of pids) process.kill(pid, 'SIGSTOP');
        return () => {
          for (const pid of pids) {
            try {
              process.kill(pid, 'SIGCONT');
            } catch {
              /* crashed meanwhile */
            }
          }
        };
      },
      stop: () => stopAll(proxy, started),
    };
  } catch (err) {
    await stopAll(proxy, started);
    throw err;
  }
}

async function stopAll(proxy, servers) {
  await proxy?.stop().catch(() => undefined);
  await Promise.all(servers.map((s) => s.stop().catch(() => undefined)));
}

/** The primary's commits wait for a standby's flush (`'*'`: any), or for none. */
async function setSynchronous(primary, synchronous) {
  await queryOnce(primary.url, `ALTER SYSTEM SET synchronous_standby_names = '${synchronous ? '*' : ''}'`);
  await queryOnce(primary.url, 'SELECT pg_reload_conf()');
}

/** Waits until a standby streams from `primary`. */
function streaming(primary) {
  return until(
    async () =>
      (await queryOnce(primary.url, `SELECT 1 FROM pg_stat_replication WHERE state = 'streaming'`)).length >
      0,
    30_000,
    'no standby streaming',
  );
}

/**
 * Waits until HAProxy sends new connections to the primary on `port` only: its own view has that server UP and
 * every other one DOWN (at start all are UP until their first check, and a connection that reached the standby
 * meanwhile is cut when it is marked down), and a connection through it reaches that primary.
 */
function routed(proxy, port) {
  return until(
    async () => {
      const states = Object.entries(await proxy.states());
      if (!states.every(([p, state]) => (Number(p) === port ? state === 'UP' : state.startsWith('DOWN'))))
        return false;
      const [row] = await queryOnce(
        proxy.url,
        'SELECT inet_server_port() AS port, pg_is_in_recovery() AS standby',
      );
      return Number(row?.port) === port && row?.standby === false;
    },
    30_000,
    `HAProxy did not send connections to the primary on port ${port}`,
  );
}

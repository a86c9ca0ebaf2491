// Plain JavaScript, so that the specs (through redis-cluster.d.mts) and the bench scripts share it.
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Free loopback ports, all distinct (held open together so that none is handed out twice). */
async function freePorts(count) {
  const servers = [];
  try {
    for (let i = 0; i < count; i++) {
      const srv = createServer();
      await new Promise((resolve, reject) => {
        srv.once('error', reject);
        srv.listen(0, '127.0.0.1', resolve);
      });
      servers.push(srv);
    }
    return servers.map((s) => /** @type {{ port: number }} */ (s.address()).port);
  } finally {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  }
}

/**
 * One `redis-cli` command against 127.0.0.1:port (or host:port), its output trimmed; rejects when it
 * fails or takes longer than 10 s.
 */
export function redisCli(node, ...args) {
  return new Promise((resolve, reject) => {
    execFile(
      'redis-cli',
      ['-h', node.host, '-p', String(node.port), ...args],
      { timeout: 10_000 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`redis-cli ${args.join(' ')} on ${node.port}: ${stderr || err.message}`));
        else resolve(String(stdout).trim());
      },
    );
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` every 100 ms until it answers true, or throws `what` after `ms`. */
async function until(check, ms, what) {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`Redis Cluster: ${what} within ${ms / 1000} s`);
    await sleep(100);
  }
}

/** The lines of CLUSTER NODES as { id, host, port, role, masterId, connected, slots }. */
async function clusterNodes(node) {
  const text = await redisCli(node, 'cluster', 'nodes');
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((line) => {
      const [id, addr, flags, masterId, , , , link, ...slots] = line.split(' ');
      const [hostPort] = addr.split('@');
      const i = hostPort.lastIndexOf(':');
      const f = flags.split(',');
      return {
        id,
        host: hostPort.slice(0, i),
        port: Number(hostPort.slice(i + 1)),
        role: f.includes('master') ? 'master' : 'replica',
        failed: f.includes('fail') || f.includes('fail?'),
        masterId: masterId === '-' ? undefined : masterId,
        connected: link === 'connected',
        slots,
      };
    });
}

/** cluster_state:ok, as this node sees it. */
async function stateOk(node) {
  return (await redisCli(node, 'cluster', 'info')).includes('cluster_state:ok');
}

/** A replica's link to its master is up and its first sync is done. */
async function replicaSynced(node) {
  const info = await redisCli(node, 'info', 'replication');
  return info.includes('master_link_status:up') && !info.includes('master_sync_in_progress:1');
}

function nodesFromEnv(text) {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      const i = s.lastIndexOf(':');
      return { host: s.slice(0, i) || '127.0.0.1', port: Number(s.slice(i + 1)) };
    });
}

/**
 * Starts a Redis Cluster of 6 `redis-server` processes (3 masters, 3 replicas) on free 127.0.0.1 ports,
 * each in its own directory under one temporary one, with the append-only file on (so the durability check
 * passes) and a short `cluster-node-timeout` (quick failovers); forms it with `redis-cli --cluster create`
 * and waits until every node says `cluster_state:ok` and every replica is in sync.
 * REDIS_CLUSTER_NODES (`host:port,host:port,...`) points at an existing cluster instead: then nothing is
 * started or stopped, and `killMaster`/`restart` are not available.
 */
export async function startRedisCluster(options = {}) {
  const nodeTimeoutMs = options.nodeTimeoutMs ?? 1000;
  if (process.env.REDIS_CLUSTER_NODES) {
    const nodes = nodesFromEnv(process.env.REDIS_CLUSTER_NODES);
    const unsupported = async () => {
      throw new Error('killMaster/restart need a private cluster (unset REDIS_CLUSTER_NODES)');
    };
    const cluster = {
      nodes,
      external: true,
      masters: async () => (await clusterNodes(nodes[0])).filter((n) => n.role === 'master' && !n.failed),
      replicas: async () => (await clusterNodes(nodes[0])).filter((n) => n.role === 'replica' && !n.failed),
      masterOf: async (key) => masterOfSlot(nodes, await keySlotOf(nodes[0], key)),
      killMaster: unsupported,
      restart: unsupported,
      stop: async () => undefined,
    };
    return cluster;
  }
  const ports = await freePorts(12);
  const root = mkdtempSync(join(tmpdir(), 'email-redis-cluster-'));
  /** @type {Map<number, { child?: import('node:child_process').ChildProcess, exited: boolean }>} */
  const procs = new Map();
  const nodes = ports.slice(0, 6).map((port) => ({ host: '127.0.0.1', port }));

  const launch = async (index) => {
    const dir = join(root, String(ports[index]));
    mkdirSync(dir, { recursive: true });
    return relaunch(index);
  };
  const relaunch = async (index) => {
    const port = ports[index];
    const dir = join(root, String(port));
    const args = [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--protected-mode',
      'no',
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      'nodes.conf',
      '--cluster-port',
      String(ports[index + 6]),
      '--cluster-node-timeout',
      String(nodeTimeoutMs),
      '--cluster-replica-validity-factor',
      '0', // a replica may always take over (tests kill at will)
      '--appendonly',
      'yes',
      '--appendfsync',
      'everysec',
      '--save',
      '',
    ];
    const proc = spawn('redis-server', args, { stdio: 'ignore' });
    const state = { child: proc, exited: false };
    procs.set(port, state);
    const orphaned = () => proc.kill('SIGKILL'); // the caller crashed before stop(): no server left behind
    process.once('exit', orphaned);
    proc.once('exit', () => {
      state.exited = true;
      process.off('exit', orphaned);
    });
    const deadline = Date.now() + 10_000;
    for (;;) {
      if (state.exited)
        throw new Error('redis-server exited at start (is it installed? apt-get install redis-server)');
      if ((await redisCli(nodes[index], 'ping').catch(() => '')) === 'PONG') return;
      if (Date.now() > deadline) throw new Error(`redis-server did not answer on 127.0.0.1:${port} in 10 s`);
      await sleep(50);
    }
  };
  const kill = (port, signal) =>
    new Promise((resolve) => {
      const state = procs.get(port);
      if (!state?.child || state.exited) return resolve(undefined);
      // A server still busy after 5 s (saving on SIGTERM on a loaded machine) is killed outright.
      const hard = setTimeout(() => state.child.kill('SIGKILL'), 5000);
      state.child.once('exit', () => {
        clearTimeout(hard);
        resolve(undefined);
      });
      state.child.kill(signal);
    });
  const stop = async () => {
    await Promise.all([...procs.keys()].map((port) => kill(port, 'SIGTERM')));
    rmSync(root, { recursive: true, force: true });
  };

  try {
    await Promise.all(nodes.map((_, i) => launch(i)));
    await redisCli(
      nodes[0],
      '--cluster',
      'create',
      ...nodes.map((n) => `${n.host}:${n.port}`),
      '--cluster-replicas',
      '1',
      '--cluster-yes',
    );
    await settled(nodes, 30_000);
  } catch (err) {
    await stop();
    throw err;
  }

  const alive = () => nodes.filter((n) => procs.get(n.port) && !procs.get(n.port).exited);
  const view = async () => clusterNodes(alive()[0]);
  return {
    nodes,
    external: false,
    masters: async () => (await view()).filter((n) => n.role === 'master' && !n.failed),
    replicas: async () => (await view()).filter((n) => n.role === 'replica' && !n.failed),
    masterOf: async (key) => masterOfSlot(alive(), await keySlotOf(alive()[0], key)),
    /**
     * SIGKILLs a master (the one owning `key`'s slot when given, else the first), waits until one of its
     * replicas has taken its slots and every live node says the cluster is ok; answers who died and who took over.
     */
    killMaster: async (key) => {
      const masters = (await view()).filter((n) => n.role === 'master' && !n.failed && n.slots.length > 0);
      const victim =
        key === undefined ? masters[0] : await masterOfSlot(alive(), await keySlotOf(alive()[0], key));
      const victimId = masters.find((m) => m.port === victim.port)?.id;
      await kill(victim.port, 'SIGKILL');
      let promoted;
      await until(
        async () => {
          const seen = await view();
          const slots = masters.find((m) => m.id === victimId)?.slots ?? [];
          const taker = seen.find(
            (n) => n.role === 'master' && !n.failed && n.port !== victim.port && n.slots.includes(slots[0]),
          );
          if (!taker) return false;
          promoted = { host: taker.host, port: taker.port };
          return true;
        },
        30_000,
        `no replica of 127.0.0.1:${victim.port} took over`,
      );
      await until(
        async () => (await Promise.all(alive().map(stateOk))).every(Boolean),
        30_000,
        'not ok again',
      );
      return { killed: { host: victim.host, port: victim.port }, promoted };
    },
    /** Starts a killed node again on its port and data: it rejoins as a replica; waits until it is in sync. */
    restart: async (node) => {
      const index = nodes.findIndex((n) => n.port === node.port);
      await kill(node.port, 'SIGKILL');
      await relaunch(index);
      await settled(nodes, 30_000);
    },
    stop,
  };
}

/** Every node agrees the cluster is ok, sees every other node connected, and every replica is in sync. */
async function settled(nodes, ms) {
  await until(
    async () => {
      const views = await Promise.all(nodes.map(clusterNodes));
      if (!views.every((v) => v.length === nodes.length && v.every((n) => n.connected && !n.failed)))
        return false;
      if (!(await Promise.all(nodes.map(stateOk))).every(Boolean)) return false;
      const replicas = views[0].filter((n) => n.role === 'replica');
      return (await Promise.all(replicas.map(replicaSynced))).every(Boolean);
    },
    ms,
    'not every node ok and in sync',
  );
}

async function keySlotOf(node, key) {
  return Number(await redisCli(node, 'cluster', 'keyslot', key));
}

/** The live master that owns `slot`. */
async function masterOfSlot(nodes, slot) {
  const view = await clusterNodes(nodes[0]);
  const owner = view.find(
    (n) =>
      n.role === 'master' &&
      !n.failed &&
      n.slots.some((range) => {
        if (range.startsWith('[')) return false; // a slot being migrated
        const [from, to = from] = range.split('-').map(Number);
        return slot >= from && slot <= to;
      }),
  );
  if (!owner) throw new Error(`Redis Cluster: no master owns slot ${slot}`);
  return { host: owner.host, port: owner.port };
}

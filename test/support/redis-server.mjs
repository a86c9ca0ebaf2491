// Plain JavaScript, so that the specs (through redis-server.d.mts) and the bench scripts share it.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** @returns {Promise<number>} */
async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {{ port: number }} */ (srv.address());
      srv.close(() => resolve(port));
    });
  });
}

/** @param {number} port @returns {Promise<boolean>} */
async function answers(port) {
  return new Promise((resolve) => {
    const sock = connect(port, '127.0.0.1');
    sock.once('connect', () => sock.write('PING\r\n'));
    sock.once('data', (d) => {
      sock.destroy();
      resolve(d.toString().startsWith('+PONG'));
    });
    sock.once('error', () => resolve(false));
  });
}

/**
 * Starts `redis-server` on a free port (or uses REDIS_URL) and waits until it answers. Persistence is
 * off unless `options.aof` (append-only file, fsync always, in a fresh directory) is set. The result can
 * `kill` the server (SIGKILL, or SIGTERM with `graceful`) and `restart` it on the same port and data.
 * With REDIS_URL, `kill` and `restart` are not available.
 * @param {{ aof?: boolean }} [options]
 */
export async function startRedis(options = {}) {
  if (process.env.REDIS_URL) {
    const unsupported = async () => {
      throw new Error('kill/restart need a private redis-server (unset REDIS_URL)');
    };
    return {
      url: process.env.REDIS_URL,
      stop: async () => undefined,
      kill: unsupported,
      restart: unsupported,
      pause: unsupported,
      resume: unsupported,
    };
  }
  let port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'email-redis-'));
  const args = () => [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '',
    '--protected-mode',
    'no',
    ...(options.aof ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']),
  ];
  /** @type {import('node:child_process').ChildProcess | undefined} */
  let child;
  let exited = true;
  const launch = async () => {
    const proc = spawn('redis-server', args(), { stdio: 'ignore' });
    child = proc;
    exited = false;
    const orphaned = () => proc.kill('SIGKILL'); // the caller crashed before stop(): no server left behind
    process.once('exit', orphaned);
    proc.once('exit', () => {
      if (child === proc) exited = true;
      process.off('exit', orphaned);
    });
    const deadline = Date.now() + 10_000;
    while (!(await answers(port))) {
      if (exited)
        throw new Error('redis-server exited at start (is it installed? apt-get install redis-server)');
      if (Date.now() > deadline)
        throw new Error(`redis-server did not answer on 127.0.0.1:${port} within 10 s`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  /** @param {NodeJS.Signals} signal */
  const kill = (signal) =>
    new Promise((resolve) => {
      if (exited || !child) return resolve(undefined);
      child.once('exit', () => resolve(undefined));
      child.kill(signal);
    });
  // The free port may be taken between our look and redis-server's bind (another server starting, a cluster
  // node's bus port): then it exits at once, and another port is tried.
  for (let tries = 1; ; tries++) {
    try {
      await launch();
      break;
    } catch (err) {
      if (!exited || tries >= 3) throw err;
      port = await freePort();
    }
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: async () => {
      await kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
    pause: () => void child?.kill('SIGSTOP'),
    resume: () => void child?.kill('SIGCONT'),
    kill: (/** @type {{ graceful?: boolean } | undefined} */ how) =>
      kill(how?.graceful ? 'SIGTERM' : 'SIGKILL'),
    restart: async () => {
      await kill('SIGKILL');
      await launch();
    },
  };
}

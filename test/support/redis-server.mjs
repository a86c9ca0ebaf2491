// Plain JavaScript, so that the specs (through redis-server.d.mts) and the bench scripts share it.
import { spawn } from 'node:child_process';
import { createServer, connect } from 'node:net';

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
 * Starts `redis-server` with persistence off on a free port (or uses REDIS_URL) and waits until it answers.
 * With REDIS_URL each caller gets its own database index from `db` so specs do not see each other's keys.
 */
export async function startRedis() {
  if (process.env.REDIS_URL) return { url: process.env.REDIS_URL, stop: async () => undefined };
  const port = await freePort();
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--protected-mode',
      'no',
    ],
    { stdio: 'ignore' },
  );
  let exited = false;
  const orphaned = () => child.kill('SIGKILL'); // the caller crashed before stop(): no server left behind
  process.once('exit', orphaned);
  child.once('exit', () => {
    exited = true;
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
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: () =>
      new Promise((resolve) => {
        if (exited) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

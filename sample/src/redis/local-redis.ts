import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** An embedded redis-server the sample started (append-only file in a temporary directory, 127.0.0.1 only). */
export interface LocalRedis {
  url: string;
  stop: () => Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

const answers = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const sock = connect(port, '127.0.0.1');
    sock.once('connect', () => sock.write('PING\r\n'));
    sock.once('data', (d) => {
      sock.destroy();
      resolve(d.toString().startsWith('+PONG'));
    });
    sock.once('error', () => resolve(false));
  });

/**
 * With REDIS_URL set, returns null (the app uses that Redis). Otherwise starts `redis-server` on a free
 * 127.0.0.1 port (REDIS_PORT to choose it), points REDIS_URL at it and returns it; it is stopped by `stop()`
 * or when this process exits. It runs as a queue's Redis should (the queue checks this at boot, and warns
 * otherwise): an append-only file (`appendonly yes`) in a temporary directory removed on stop, and
 * `maxmemory-policy noeviction`.
 */
export async function startLocalRedis(): Promise<LocalRedis | null> {
  if (process.env.REDIS_URL) return null;
  const port = process.env.REDIS_PORT ? Number(process.env.REDIS_PORT) : await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'sample-redis-'));
  const child = spawn(
    'redis-server',
    [
      ...['--port', String(port), '--bind', '127.0.0.1', '--dir', dir],
      ...['--appendonly', 'yes', '--save', '', '--maxmemory-policy', 'noeviction'],
    ],
    { stdio: 'ignore' },
  );
  let exited = false;
  let spawnError: Error | undefined;
  child.once('error', (err) => (spawnError = err));
  child.once('exit', () => {
    exited = true;
    rmSync(dir, { recursive: true, force: true });
  });
  const kill = (): void => {
    if (!exited) child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', kill);
  const deadline = Date.now() + 10_000;
  while (!(await answers(port))) {
    if (spawnError || exited) {
      throw new Error(
        'redis-server could not start (install it: sudo apt-get install redis-server), or set REDIS_URL',
      );
    }
    if (Date.now() > deadline) throw new Error(`redis-server did not answer on 127.0.0.1:${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const url = `redis://127.0.0.1:${port}`;
  process.env.REDIS_URL = url;
  return {
    url,
    stop: () =>
      new Promise((resolve) => {
        process.off('exit', kill);
        if (exited) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

// Plain JavaScript, so that the specs (through postgres-server.d.mts), the sample's tests and the bench
// scripts share it. A private PostgreSQL from Debian's `postgresql` package, in a temporary directory.
import { spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
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

/** The newest `/usr/lib/postgresql/<major>/bin` that holds `initdb` and `postgres`, or undefined. */
export function postgresBinDir() {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const majors = readdirSync(root)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a));
  for (const major of majors) {
    const bin = join(root, major, 'bin');
    if (existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'postgres'))) return bin;
  }
  return undefined;
}

/**
 * PostgreSQL refuses to run as root: as root, the server runs as the `postgres` user that Debian's package
 * creates (spawned with its uid and gid, and the directory chowned to it); otherwise as the current user.
 * @returns {{ uid: number, gid: number } | undefined}
 */
function runAs() {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag) => spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' });
  const uid = id('-u');
  const gid = id('-g');
  if (uid.status !== 0 || gid.status !== 0)
    throw new Error('running as root, PostgreSQL needs the `postgres` OS user (apt-get install postgresql)');
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** @param {string} bin @param {number} port @returns {boolean} */
function ready(bin, port) {
  const run = spawnSync(join(bin, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port), '-q'], {
    stdio: 'ignore',
    env: { ...process.env, PGCONNECT_TIMEOUT: '2' },
  });
  return run.status === 0;
}

/**
 * Starts a private PostgreSQL on a free 127.0.0.1 port in a fresh temporary directory (initdb, trust
 * authentication, fsync off, a unix socket in that directory), or uses DATABASE_URL. The result can `stop`
 * it (and remove the directory), `kill` it (the server goes down, its data stays) and `restart` it on the
 * same port and data, `pause` it (SIGSTOP of the postmaster and every backend: connections stay open, nothing is
 * answered) and `resume` it (SIGCONT). With DATABASE_URL, `kill`, `restart`, `pause` and `resume` are not available.
 */
export async function startPostgres() {
  if (process.env.DATABASE_URL) {
    const unsupported = async () => {
      throw new Error('kill/restart need a private PostgreSQL (unset DATABASE_URL)');
    };
    const unsupportedSync = () => {
      throw new Error('pause/resume need a private PostgreSQL (unset DATABASE_URL)');
    };
    return {
      url: process.env.DATABASE_URL,
      stop: async () => undefined,
      kill: unsupported,
      restart: unsupported,
      pause: unsupportedSync,
      resume: unsupportedSync,
    };
  }
  const bin = postgresBinDir();
  if (!bin)
    throw new Error(
      'PostgreSQL is not installed (no /usr/lib/postgresql/<major>/bin/initdb): apt-get install postgresql, or set DATABASE_URL',
    );
  const user = runAs();
  const dir = mkdtempSync(join(tmpdir(), 'email-pg-'));
  const data = join(dir, 'data');
  const socketDir = join(dir, 'sock');
  mkdirSync(socketDir);
  if (user) {
    chownSync(dir, user.uid, user.gid);
    chownSync(socketDir, user.uid, user.gid);
  }
  const spawnOpts = user ? { uid: user.uid, gid: user.gid } : {};
  const init = spawnSync(
    join(bin, 'initdb'),
    ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C'],
    { ...spawnOpts, encoding: 'utf8', cwd: dir },
  );
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed: ${init.stderr || init.stdout}`);
  }
  const port = await freePort();
  const args = [
    '-D',
    data,
    '-p',
    String(port),
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    `unix_socket_directories=${socketDir}`,
    '-c',
    'fsync=off',
    '-c',
    'synchronous_commit=off',
    '-c',
    'full_page_writes=off',
    '-c',
    'max_connections=300',
    '-c',
    'logging_collector=off',
  ];
  /** @type {import('node:child_process').ChildProcess | undefined} */
  let child;
  let exited = true;
  const launch = async () => {
    // its own process group, so that a kill reaches the postmaster and every backend at once
    const proc = spawn(join(bin, 'postgres'), args, {
      ...spawnOpts,
      cwd: dir,
      stdio: 'ignore',
      detached: true,
    });
    child = proc;
    exited = false;
    const orphaned = () => {
      // the caller crashed before stop(): no server, and no directory, left behind
      try {
        if (proc.pid) process.kill(-proc.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
      rmSync(dir, { recursive: true, force: true });
    };
    process.once('exit', orphaned);
    proc.once('exit', () => {
      if (child === proc) exited = true;
      process.off('exit', orphaned);
    });
    const deadline = Date.now() + 30_000;
    while (!ready(bin, port)) {
      if (exited)
        throw new Error('postgres exited at start (is PostgreSQL installed? apt-get install postgresql)');
      if (Date.now() > deadline) throw new Error(`postgres did not answer on 127.0.0.1:${port} within 30 s`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  /** @param {NodeJS.Signals} signal */
  const kill = (signal) =>
    new Promise((resolve) => {
      if (exited || !child?.pid) return resolve(undefined);
      child.once('exit', () => resolve(undefined));
      signalAll('SIGCONT'); // a paused server cannot shut down
      try {
        // SIGINT: PostgreSQL's fast shutdown (backends end, clean stop); SIGKILL: the whole group at once
        if (signal === 'SIGKILL') process.kill(-child.pid, 'SIGKILL');
        else child.kill(signal);
      } catch {
        resolve(undefined);
      }
    });
  /**
   * Sends `signal` to the postmaster and to every process it forked (backends, checkpointer, ...). Each backend
   * calls setsid() at its start, so the postmaster's process group does not reach them: its children are found
   * by their parent pid in /proc. SIGSTOP stops the postmaster first (no new backend is forked after the
   * look-up); SIGCONT wakes the children first.
   * @param {'SIGSTOP' | 'SIGCONT'} signal
   */
  const signalAll = (signal) => {
    const pid = child?.pid;
    if (exited || !pid) return;
    const send = (target) => {
      try {
        process.kill(target, signal);
      } catch {
        /* gone meanwhile */
      }
    };
    if (signal === 'SIGSTOP') send(pid);
    for (const c of childrenOf(pid)) send(c);
    if (signal === 'SIGCONT') send(pid);
  };
  await launch();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    stop: async () => {
      await kill('SIGINT');
      rmSync(dir, { recursive: true, force: true });
    },
    kill: async () => {
      await kill('SIGINT');
    },
    restart: async () => {
      await kill('SIGINT');
      await launch();
    },
    pause: () => signalAll('SIGSTOP'),
    resume: () => signalAll('SIGCONT'),
  };
}

/**
 * The pids whose parent is `ppid` (read from /proc/<pid>/stat; `pkill -P` does the same).
 * @param {number} ppid @returns {number[]}
 */
function childrenOf(ppid) {
  const found = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat;
    try {
      stat = readFileSync(join('/proc', name, 'stat'), 'utf8');
    } catch {
      continue; // ended meanwhile
    }
    // pid (comm) state ppid ...: comm may hold spaces and parentheses, so read after the last ')'
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[1]) === ppid) found.push(Number(name));
  }
  return found;
}

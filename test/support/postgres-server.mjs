// Plain JavaScript, so that the specs (through postgres-server.d.mts), the sample's tests and the bench
// scripts share it. A private PostgreSQL from Debian's `postgresql` package, in a temporary directory.
import { spawn, spawnSync } from 'node:child_process';
import {
  chownSync,
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A free TCP port on 127.0.0.1. @returns {Promise<number>} */
export async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {{ port: number }} */ (srv.address());
      srv.close(() => resolve(port));
    });
  });
}

/** Where Debian installs `name` (`/usr/sbin/<name>`), or the one on the PATH, or undefined. @param {string} name */
export function systemBin(name) {
  if (existsSync(`/usr/sbin/${name}`)) return `/usr/sbin/${name}`;
  const which = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  return which.status === 0 ? which.stdout.trim() : undefined;
}

/** Whether something accepts a TCP connection on 127.0.0.1:`port`. @param {number} port @returns {Promise<boolean>} */
export function acceptsOn(port) {
  return new Promise((resolve) => {
    const sock = connect(port, '127.0.0.1');
    sock.once('connect', () => (sock.destroy(), resolve(true)));
    sock.once('error', () => resolve(false));
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
 * PostgreSQL (and PgBouncer) refuse to run as root: as root, the server runs as the `postgres` user that Debian's package
 * creates (spawned with its uid and gid, and the directory chowned to it); otherwise as the current user.
 * @returns {{ uid: number, gid: number } | undefined}
 */
export function runAs() {
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

/** The settings every private server starts with (`options.settings` adds to them or overrides them). */
const DEFAULT_SETTINGS = {
  listen_addresses: '127.0.0.1',
  fsync: 'off',
  synchronous_commit: 'off',
  full_page_writes: 'off',
  max_connections: '300',
  logging_collector: 'off',
};

/**
 * Starts a private PostgreSQL on a free 127.0.0.1 port in a fresh temporary directory (initdb, trust
 * authentication, fsync off, a unix socket in that directory), or uses DATABASE_URL. The result can `stop`
 * it (and remove the directory), `kill` it (the server goes down, its data stays) and `restart` it on the
 * same port and data, `pause` it (SIGSTOP of the postmaster and every backend: connections stay open, nothing is
 * answered) and `resume` it (SIGCONT). With DATABASE_URL, `kill`, `restart`, `pause` and `resume` are not available.
 *
 * `options` (a private server always, whatever DATABASE_URL says): `settings`, more `-c` settings (overriding the
 * defaults above); `standbyOf`, the port of a private server to copy with `pg_basebackup -R` instead of `initdb`:
 * the new server is its streaming standby (`primary_conninfo`, `standby.signal`); `log`, the server's log kept
 * in its directory (`log()` reads it). Such a server can also `crash` (SIGKILL of the postmaster and of every
 * process it forked: a machine that dies) and `promote` (`pg_ctl promote`, waiting until it takes writes);
 * `port`, the port to listen on (a node that rejoins where it was) instead of a free one.
 * @param {{ settings?: Record<string, string | number>, standbyOf?: number, log?: boolean, port?: number }} [options]
 */
export async function startPostgres(options = {}) {
  const custom =
    options.settings !== undefined ||
    options.standbyOf !== undefined ||
    options.log === true ||
    options.port !== undefined;
  if (process.env.DATABASE_URL && !custom) {
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
      crash: unsupported,
      promote: unsupportedSync,
      log: () => '',
      pid: () => undefined,
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
  // a standby is a copy of its primary (pg_basebackup -R writes primary_conninfo and standby.signal)
  const init =
    options.standbyOf === undefined
      ? spawnSync(
          join(bin, 'initdb'),
          ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C'],
          { ...spawnOpts, encoding: 'utf8', cwd: dir },
        )
      : spawnSync(
          join(bin, 'pg_basebackup'),
          [
            '-h',
            '127.0.0.1',
            '-p',
            String(options.standbyOf),
            '-U',
            'postgres',
            '-D',
            data,
            '-R',
            '-X',
            'stream',
            '-c',
            'fast',
          ],
          { ...spawnOpts, encoding: 'utf8', cwd: dir, env: { ...process.env, PGCONNECT_TIMEOUT: '5' } },
        );
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    const what = options.standbyOf === undefined ? 'initdb' : 'pg_basebackup';
    throw new Error(`${what} failed: ${init.stderr || init.stdout}`);
  }
  const port = options.port ?? (await freePort());
  const logFile = join(dir, 'postgres.log');
  const settings = {
    ...DEFAULT_SETTINGS,
    unix_socket_directories: socketDir,
    ...(options.log ? { log_min_messages: 'log', log_line_prefix: '%m [%p] ' } : {}),
    ...options.settings,
  };
  const args = ['-D', data, '-p', String(port)];
  for (const [name, value] of Object.entries(settings)) args.push('-c', `${name}=${value}`);
  /** @type {import('node:child_process').ChildProcess | undefined} */
  let child;
  let exited = true;
  const launch = async () => {
    // its own process group, so that a kill reaches the postmaster and every backend at once
    const out = options.log ? openSync(logFile, 'a') : 'ignore';
    const proc = spawn(join(bin, 'postgres'), args, {
      ...spawnOpts,
      cwd: dir,
      stdio: ['ignore', out, out],
      detached: true,
    });
    if (typeof out === 'number') closeSync(out);
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
      if (signal !== 'SIGKILL') signalAll('SIGCONT'); // a paused server cannot shut down (a crash needs no thaw)
      try {
        // SIGINT: PostgreSQL's fast shutdown (backends end, clean stop); SIGKILL: the postmaster stopped first
        // (it forks nothing more), then every process it forked, then itself: nothing flushes, nothing says goodbye
        if (signal === 'SIGKILL') {
          process.kill(child.pid, 'SIGSTOP');
          for (const c of childrenOf(child.pid)) process.kill(c, 'SIGKILL');
          process.kill(-child.pid, 'SIGKILL');
        } else child.kill(signal);
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
    crash: async () => {
      await kill('SIGKILL');
    },
    promote: () => {
      const run = spawnSync(join(bin, 'pg_ctl'), ['promote', '-w', '-t', '30', '-D', data], {
        ...spawnOpts,
        encoding: 'utf8',
        cwd: dir,
      });
      if (run.status !== 0) throw new Error(`pg_ctl promote failed: ${run.stderr || run.stdout}`);
    },
    log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''),
    pid: () => (exited ? undefined : child?.pid),
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

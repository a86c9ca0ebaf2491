// Installs the dev dependencies (npm ci) when a fresh clone has none yet, so that
// `npm run sample` and `npm test` work as the first command after cloning.
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

const needed = ['typescript', 'jest', '@nestjs/core', 'undici'];
const missing = needed.filter(
  (name) => !existsSync(new URL(`../node_modules/${name}/package.json`, import.meta.url)),
);
if (missing.length > 0) {
  console.log(`Installing dependencies first (missing: ${missing.join(', ')}) ...`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const cwd = new URL('..', import.meta.url);
  const run = spawnSync(npm, ['ci', '--no-audit', '--no-fund'], { cwd, stdio: 'inherit' });
  if (run.status !== 0) {
    console.error(
      'npm ci failed. If it says the lock file is out of sync, regenerate it:\n' +
        '  rm -rf node_modules package-lock.json && npm install\n' +
        '(node scripts/check-lock.mjs names what is missing).',
    );
    process.exit(run.status ?? 1);
  }
}

// Chromium drives the outbox page's browser tests (test/sandbox-page) and `npm run bench:page`; the sample
// (`--sample`) does not need it. Installed from Debian's package when missing and running as root;
// otherwise say what to install.
const forSample = process.argv.includes('--sample');
const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
if (!forSample && !existsSync(chromiumPath)) {
  if (process.platform === 'linux' && process.getuid?.() === 0 && !process.env.CHROMIUM_PATH) {
    console.log('Installing chromium (for the outbox browser tests) with apt-get ...');
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    for (const args of [['update'], ['install', '-y', '--no-install-recommends', 'chromium']]) {
      const run = spawnSync('apt-get', args, { stdio: 'inherit', env });
      if (run.status !== 0) process.exit(run.status ?? 1);
    }
  } else {
    console.error(
      `Chromium is needed for the outbox browser tests but ${chromiumPath} does not exist.\n` +
        'Install it (Debian/Ubuntu: sudo apt-get install chromium), or set CHROMIUM_PATH to a Chromium or Chrome binary.',
    );
    process.exit(1);
  }
}

// redis-server backs the queue specs (test/queue), `npm run sample`, `chaos:queue` and the queue bench,
// unless REDIS_URL points at an existing Redis. Installed from Debian's package when missing and root.
function onPath(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}
if (!process.env.REDIS_URL && !onPath('redis-server')) {
  if (process.platform === 'linux' && process.getuid?.() === 0) {
    console.log('Installing redis-server (for the queue specs and the sample) with apt-get ...');
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    for (const args of [['update'], ['install', '-y', '--no-install-recommends', 'redis-server']]) {
      const run = spawnSync('apt-get', args, { stdio: 'inherit', env });
      if (run.status !== 0) process.exit(run.status ?? 1);
    }
  } else {
    console.error(
      'redis-server is needed for the queue specs and the sample but is not on the PATH.\n' +
        'Install it (Debian/Ubuntu: sudo apt-get install redis-server), or set REDIS_URL to an existing Redis.',
    );
    process.exit(1);
  }
}

// PostgreSQL backs the outbox specs (test/outbox), `npm run sample`, `chaos:outbox` and the outbox bench,
// unless DATABASE_URL points at an existing server: Debian's `postgresql` package (the specs start a private
// server from /usr/lib/postgresql/<major>/bin). Installed with apt-get when missing and root.
const hasPostgres =
  spawnSync('sh', ['-c', 'ls /usr/lib/postgresql/*/bin/initdb'], { stdio: 'ignore' }).status === 0;
if (!process.env.DATABASE_URL && !hasPostgres) {
  if (process.platform === 'linux' && process.getuid?.() === 0) {
    console.log('Installing postgresql (for the outbox specs and the sample) with apt-get ...');
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    for (const args of [['update'], ['install', '-y', '--no-install-recommends', 'postgresql']]) {
      const run = spawnSync('apt-get', args, { stdio: 'inherit', env });
      if (run.status !== 0) process.exit(run.status ?? 1);
    }
  } else {
    console.error(
      'PostgreSQL is needed for the outbox specs and the sample but /usr/lib/postgresql/<major>/bin/initdb is missing.\n' +
        'Install it (Debian/Ubuntu: sudo apt-get install postgresql), or set DATABASE_URL to an existing PostgreSQL.',
    );
    process.exit(1);
  }
}

// PgBouncer and HAProxy put the outbox where production PostgreSQL runs (test/outbox-production, and
// `chaos:outbox -- --pgbouncer` / `-- --failover`): a pooler in front, a primary failed over behind a proxy.
// Debian's packages, installed with apt-get when missing and root. PGBOUNCER_TRANSACTION_URL and
// PGBOUNCER_SESSION_URL point the PgBouncer specs at existing ones; a failover needs servers of its own.
const productionTools = [
  {
    command: 'pgbouncer',
    pkg: 'pgbouncer',
    skip: process.env.PGBOUNCER_TRANSACTION_URL && process.env.PGBOUNCER_SESSION_URL,
  },
  { command: 'haproxy', pkg: 'haproxy', skip: false },
];
const onSbin = (command) => existsSync(`/usr/sbin/${command}`) || onPath(command);
const missingTools = productionTools.filter((t) => !t.skip && !onSbin(t.command)).map((t) => t.pkg);
if (missingTools.length > 0) {
  if (process.platform === 'linux' && process.getuid?.() === 0) {
    console.log(
      `Installing ${missingTools.join(' and ')} (for the outbox's production specs) with apt-get ...`,
    );
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    for (const args of [['update'], ['install', '-y', '--no-install-recommends', ...missingTools]]) {
      const run = spawnSync('apt-get', args, { stdio: 'inherit', env });
      if (run.status !== 0) process.exit(run.status ?? 1);
    }
  } else {
    console.error(
      `${missingTools.join(' and ')} ${missingTools.length > 1 ? 'are' : 'is'} needed for the outbox's production specs (test/outbox-production) but not installed.\n` +
        `Install ${missingTools.length > 1 ? 'them' : 'it'} (Debian/Ubuntu: sudo apt-get install ${missingTools.join(' ')}).`,
    );
    process.exit(1);
  }
}

import { createHash } from 'node:crypto';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REPO_ROOT } from './consumer.pack.js';
import { run } from './consumer.process.js';
import { installSpecs, type InstallBlock, type NestMajor } from './install-lines.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');

/** This package's name in the install lines, installed from the packed tarball instead of the registry. */
const PACKAGE = 'nestjs-transactional-email';

const NPM_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'];
/** The documented installs say what npm warns (`EBADENGINE` above all), as a user's terminal shows it. */
const NPM_INSTALL_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund', '--loglevel=warn'];

/** The packages an npm output warns `EBADENGINE` for (`name@version`), each once. */
export function engineWarnings(output: string): string[] {
  const names = [...output.matchAll(/EBADENGINE[\s\S]*?package: '([^']+)'/g)].map((m) => m[1]);
  return [...new Set(names)];
}

/**
 * Where installed apps are kept between runs, one entry per key (see `installKey`): inside the repository's
 * `node_modules`, so that `npm ci` (and a fresh clone, and so CI) starts without one.
 */
export const INSTALL_CACHE = join(REPO_ROOT, 'node_modules', '.cache', 'nte-consumer');

/** The words of `npm install` for one block, as a user types them (this package from `tarball`). */
function installWords(block: InstallBlock, tarball: string): string[] {
  return installSpecs(block).map(({ name, range }) =>
    name === PACKAGE ? tarball : range === 'latest' ? name : `${name}@${range}`,
  );
}

/**
 * What an app's install depends on: the fixture's package.json, the documented install lines of its major,
 * what of this package's package.json npm resolves against (dependencies, peers, engines), npm's and Node's
 * versions, and the day (UTC): a day's first run installs afresh, so a release of a dependency the lines
 * name is met within a day, as a new user meets it.
 */
export function installKey(major: NestMajor, npmVersion: string, day = new Date()): string {
  const own = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as Record<string, unknown>;
  const parts = [
    'entry v2: node_modules, lock files, engine warnings',
    major,
    readFileSync(join(FIXTURES, major, 'package.json'), 'utf8'),
    JSON.stringify(installWords(major, 'TARBALL')),
    JSON.stringify(installWords(`${major}-orms`, 'TARBALL')),
    JSON.stringify([own.dependencies, own.peerDependencies, own.peerDependenciesMeta, own.engines]),
    npmVersion.trim(),
    process.versions.node.split('.')[0],
  ];
  const hash = createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 16);
  return `${major}-${day.toISOString().slice(0, 10)}-${hash}`;
}

/** The files of an installed app that make up its install: what a cache entry holds. */
const INSTALLED = ['package.json', 'package-lock.json'];
/** A cache entry's record of the packages its install warned `EBADENGINE` for. */
const WARNINGS = 'engine-warnings.json';

/**
 * Fills `root` (a fresh copy of the fixture) from the cache entry `entry`: its package.json and lock file,
 * and its node_modules as hard links (a second to link, against tens of seconds to install). npm rewrites
 * `node_modules/.package-lock.json` in place, so that file is a copy of its own; this package's folder is left
 * out, for `npm install` of this run's tarball to put it back; nothing else changes.
 */
async function restore(entry: string, root: string): Promise<void> {
  for (const file of INSTALLED) copyFileSync(join(entry, file), join(root, file));
  await run('cp', ['-al', join(entry, 'node_modules'), join(root, 'node_modules')], root, 120_000);
  const hidden = join(root, 'node_modules', '.package-lock.json');
  if (existsSync(hidden)) {
    unlinkSync(hidden);
    copyFileSync(join(entry, 'node_modules', '.package-lock.json'), hidden);
  }
  // This package is the one thing each run installs anew: without its folder, npm installs this run's
  // tarball even when it holds the same bytes as the entry's (and never keeps an older build).
  rmSync(join(root, 'node_modules', PACKAGE), { recursive: true, force: true });
}

/**
 * Keeps the install of `root` as the entry `entry`: a real copy (the app's own later writes into its
 * node_modules never reach the entry), made beside it and renamed into place whole, so that a run that
 * stops half way, or another run storing the same entry, never leaves a partial one. Entries of other
 * keys of the same major are removed.
 */
async function store(root: string, entry: string, major: NestMajor, warned: string[]): Promise<void> {
  const draft = `${entry}.draft-${process.pid}`;
  rmSync(draft, { recursive: true, force: true });
  mkdirSync(draft, { recursive: true });
  writeFileSync(join(draft, WARNINGS), JSON.stringify(warned));
  for (const file of INSTALLED) copyFileSync(join(root, file), join(draft, file));
  await run('cp', ['-a', join(root, 'node_modules'), join(draft, 'node_modules')], root, 300_000);
  writeFileSync(join(draft, 'complete'), new Date().toISOString());
  try {
    renameSync(draft, entry);
  } catch {
    rmSync(draft, { recursive: true, force: true }); // another run stored it first
  }
  for (const name of readdirSync(INSTALL_CACHE))
    if (name.startsWith(`${major}-`) && name !== basename(entry) && !name.includes('.draft-'))
      rmSync(join(INSTALL_CACHE, name), { recursive: true, force: true });
}

/**
 * Copies the fixture project `fixtures/<major>` (what `nest new` of that major gives, plus our test files)
 * to `dir/<major>` and installs, one `npm install <packages>` after the other as a user would, the documented
 * blocks of that major: docs/getting-started.md (`<!-- install-lines: <major> -->`; this package from
 * `tarball`), then the ORMs of docs/outbox.md (`<!-- install-lines: <major>-orms -->`). In that order a
 * package the first block puts at the top level (ioredis 6, say) meets the second block's peers, as it does
 * in an app: one install of both would let npm pick versions that suit them all and hide the conflict.
 *
 * The install is kept in `INSTALL_CACHE` under `installKey` (the lines, the fixture, npm, Node, the day):
 * a later run with the same key links it in and installs only this run's tarball over it. Set
 * EMAIL_CONSUMER_FRESH=1 to install afresh regardless. Resolves with the app's directory, whether the
 * cache served it, and the packages the documented installs warned `EBADENGINE` for.
 */
export async function createConsumer(
  dir: string,
  tarball: string,
  major: NestMajor,
): Promise<{ root: string; cached: boolean; engineWarnings: string[] }> {
  const root = join(dir, major);
  cpSync(join(FIXTURES, major), root, { recursive: true });
  const { stdout: npmVersion } = await run('npm', ['--version'], root);
  const entry = join(INSTALL_CACHE, installKey(major, npmVersion));
  const fresh = process.env.EMAIL_CONSUMER_FRESH === '1';
  if (!fresh && existsSync(join(entry, 'complete'))) {
    await restore(entry, root);
    const { stderr } = await run('npm', ['install', ...NPM_FLAGS, tarball], root, 300_000);
    const warned = JSON.parse(readFileSync(join(entry, WARNINGS), 'utf8')) as string[];
    return { root, cached: true, engineWarnings: [...new Set([...warned, ...engineWarnings(stderr)])] };
  }
  const warned: string[] = [];
  for (const block of [major, `${major}-orms`] as const) {
    const words = installWords(block, tarball);
    const { stderr } = await run('npm', ['install', ...NPM_INSTALL_FLAGS, ...words], root, 300_000);
    warned.push(...engineWarnings(stderr));
  }
  mkdirSync(INSTALL_CACHE, { recursive: true });
  await store(root, entry, major, [...new Set(warned)]);
  return { root, cached: false, engineWarnings: [...new Set(warned)] };
}

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
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from './consumer.process.js';
import { BUILD_HASH_FILE, sourceHash } from '../../scripts/source-hash.mjs';

/** Root of this repository. */
export const REPO_ROOT = resolve(fileURLToPath(import.meta.url), '../../..');

/** What is left out of the staged copy: installs, build output (any `dist/`) and local leftovers. */
const SKIPPED = new Set(['node_modules', 'dist', '.git', '.tmp', 'coverage', '.jest-results.json']);

/** A packed tarball and the paths it holds (relative to the package root). */
export interface PackedPackage {
  tarball: string;
  files: string[];
}

/** True when the repository's `dist/` was built by `npm run build` from the sources as they are now. */
function builtFromCurrentSources(): boolean {
  const recorded = join(REPO_ROOT, BUILD_HASH_FILE);
  if (!existsSync(recorded) || !existsSync(join(REPO_ROOT, 'dist'))) return false;
  return readFileSync(recorded, 'utf8').trim() === sourceHash(REPO_ROOT);
}

/** Where packed tarballs are kept between runs, by `packKey` (beside the consumer apps' installs). */
const PACK_CACHE = join(REPO_ROOT, 'node_modules', '.cache', 'nte-consumer');

/**
 * What a pack holds depends on: the build's inputs (`sourceHash`: lib/, package.json, the tsconfig files and
 * the build scripts), the compiler that builds them, and the other files the tarball ships.
 */
function packKey(): string {
  const typescript = JSON.parse(
    readFileSync(join(REPO_ROOT, 'node_modules', 'typescript', 'package.json'), 'utf8'),
  ) as { version: string };
  const hash = createHash('sha256').update(sourceHash(REPO_ROOT)).update(typescript.version);
  for (const file of ['README.md', 'CHANGELOG.md', 'LICENSE'])
    if (existsSync(join(REPO_ROOT, file))) hash.update(file).update(readFileSync(join(REPO_ROOT, file)));
  return `pack-${hash.digest('hex').slice(0, 16)}`;
}

/** The pack kept for `key`, copied into `workDir`; undefined when there is none. */
function cachedPack(key: string, workDir: string): PackedPackage | undefined {
  const entry = join(PACK_CACHE, key);
  if (!existsSync(join(entry, 'packed.json'))) return undefined;
  const kept = JSON.parse(readFileSync(join(entry, 'packed.json'), 'utf8')) as {
    filename: string;
    files: string[];
  };
  const tarball = join(workDir, kept.filename);
  copyFileSync(join(entry, kept.filename), tarball);
  return { tarball, files: kept.files };
}

/** Keeps `packed` as the entry `key` (written beside it and renamed whole); other packs' entries go. */
function keepPack(key: string, packed: PackedPackage): void {
  const entry = join(PACK_CACHE, key);
  const draft = `${entry}.draft-${process.pid}`;
  rmSync(draft, { recursive: true, force: true });
  mkdirSync(draft, { recursive: true });
  const filename = basename(packed.tarball);
  copyFileSync(packed.tarball, join(draft, filename));
  writeFileSync(join(draft, 'packed.json'), JSON.stringify({ filename, files: packed.files }));
  try {
    renameSync(draft, entry);
  } catch {
    rmSync(draft, { recursive: true, force: true }); // another run kept it first
  }
  for (const name of readdirSync(PACK_CACHE))
    if (name.startsWith('pack-') && name !== key && !name.includes('.draft-'))
      rmSync(join(PACK_CACHE, name), { recursive: true, force: true });
}

/**
 * The package packed as a release would pack it (`packPackage`), kept between runs by what it is made of
 * (`packKey`): a run whose sources are those of a previous run's pack (a rerun, a change to the specs only)
 * takes that tarball instead of building and packing the same sources again (some 17 s of two busy cores).
 * Set EMAIL_CONSUMER_FRESH=1 to build afresh regardless.
 */
export async function packPackageCached(workDir: string): Promise<PackedPackage> {
  const key = packKey();
  if (process.env.EMAIL_CONSUMER_FRESH !== '1') {
    const kept = cachedPack(key, workDir);
    if (kept) return kept;
  }
  const packed = await packPackage(workDir);
  mkdirSync(PACK_CACHE, { recursive: true });
  keepPack(key, packed);
  return packed;
}

/**
 * Builds and packs the package the way a release would (`npm run build`, then `npm pack`), but in a
 * copy of the repository under `workDir`, so that the repository's own `dist/` is never rebuilt
 * under the feet of other tests. The copy shares the repository's `node_modules` through a symlink.
 * When the repository's `dist/` is the build of its current sources (CI builds before it tests), the
 * copy takes that build instead of compiling the same sources again.
 */
export async function packPackage(workDir: string): Promise<PackedPackage> {
  const stage = join(workDir, 'stage');
  cpSync(REPO_ROOT, stage, {
    recursive: true,
    filter: (src) => !SKIPPED.has(basename(src)) && !src.endsWith('.tgz'),
  });
  if (existsSync(join(REPO_ROOT, 'node_modules')))
    symlinkSync(join(REPO_ROOT, 'node_modules'), join(stage, 'node_modules'));
  if (builtFromCurrentSources()) cpSync(join(REPO_ROOT, 'dist'), join(stage, 'dist'), { recursive: true });
  else await run('npm', ['run', 'build'], stage, 180_000);
  const { stdout } = await run(
    'npm',
    ['pack', '--ignore-scripts', '--json', '--pack-destination', workDir],
    stage,
  );
  const [info] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  return { tarball: join(workDir, info.filename), files: info.files.map((f) => f.path) };
}

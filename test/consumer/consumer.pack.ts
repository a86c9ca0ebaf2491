import { cpSync, existsSync, readFileSync, symlinkSync } from 'node:fs';
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

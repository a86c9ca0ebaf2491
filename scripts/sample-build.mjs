#!/usr/bin/env node
// `npm run sample`'s build step: builds what changed since the last start, and only that.
// - The package (`dist/`): rebuilt with `npm run build` (scripts/build.mjs) unless `dist/` is the build of
//   the current sources (the hash scripts/build.mjs records in .tmp/build-source.hash).
// - The sample (`sample/dist/`): compiled again (from an empty sample/dist, so no file of a deleted source
//   stays) unless its sources, its tsconfig and the package's build are those of the last compile
//   (recorded in .tmp/sample-source.hash).
// It prints one line saying what it did, so a start without a rebuild says so.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { BUILD_HASH_FILE, sourceHash } from './source-hash.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
/** Where the hash of the sample's last compile is kept. */
export const SAMPLE_HASH_FILE = join('.tmp', 'sample-source.hash');

const read = (file) => (existsSync(file) ? readFileSync(file, 'utf8').trim() : null);

function* filesOf(dir) {
  const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name));
  for (const entry of entries) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) yield* filesOf(full);
    else yield full;
  }
}

/** The hash of what the sample's compile reads: its sources, its tsconfig, and the package build it types against. */
export function sampleHash(base, packageHash) {
  const hash = createHash('sha256')
    .update(packageHash ?? '')
    .update('\0');
  for (const file of [join(base, 'sample', 'tsconfig.json'), ...filesOf(join(base, 'sample', 'src'))])
    hash.update(relative(base, file)).update('\0').update(readFileSync(file)).update('\0');
  return hash.digest('hex');
}

function run(args) {
  execFileSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
}

/**
 * What a start of the sample must build under `base`: the package (`dist/` is not the build of the current
 * sources) and the sample (its last compile read other sources, another tsconfig or another package build).
 */
export function sampleBuildPlan(base) {
  const packageHash = sourceHash(base);
  const packageBuilt =
    read(join(base, BUILD_HASH_FILE)) === packageHash && existsSync(join(base, 'dist', 'index.js'));
  const wanted = sampleHash(base, packageHash);
  const sampleBuilt =
    read(join(base, SAMPLE_HASH_FILE)) === wanted && existsSync(join(base, 'sample', 'dist', 'main.js'));
  return { buildPackage: !packageBuilt, compileSample: !sampleBuilt || !packageBuilt };
}

function main() {
  const plan = sampleBuildPlan(root);
  const said = [];
  if (plan.buildPackage) {
    run([join(root, 'scripts', 'build.mjs')]);
    said.push('built the package');
  } else said.push('the package is built from the current sources');
  if (plan.compileSample) {
    rmSync(join(root, SAMPLE_HASH_FILE), { force: true }); // recorded again once the compile is whole
    rmSync(join(root, 'sample', 'dist'), { recursive: true, force: true });
    run([tsc, '-p', join('sample', 'tsconfig.json')]);
    mkdirSync(join(root, '.tmp'), { recursive: true });
    writeFileSync(join(root, SAMPLE_HASH_FILE), `${sampleHash(root, sourceHash(root))}\n`);
    said.push('compiled the sample');
  } else said.push('the sample is compiled from the current sources');
  console.log(`sample: ${said.join('; ')}.`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();

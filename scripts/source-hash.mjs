// The SHA-256 of everything `npm run build` reads: lib/, the tsconfig files, the build scripts and
// package.json. `npm run build` records it in .tmp/build-source.hash beside a finished build; the
// consumer test packs that build as is when the hash still matches (the sources are those of dist/),
// and builds afresh in its own copy otherwise.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const INPUTS = [
  'lib',
  'package.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'tsconfig.build.cjs.json',
  'scripts/build.mjs',
  'scripts/entry-points.mjs',
];

function* filesOf(path) {
  if (!existsSync(path)) return;
  const entries = readdirSync(path, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name));
  for (const entry of entries) {
    const full = join(path, entry.name);
    if (entry.isDirectory()) yield* filesOf(full);
    else yield full;
  }
}

/** The hash of the build's inputs under `root`. */
export function sourceHash(root) {
  const hash = createHash('sha256');
  for (const input of INPUTS) {
    const full = join(root, input);
    if (!existsSync(full)) continue;
    const files = statSync(full).isDirectory() ? [...filesOf(full)] : [full];
    for (const file of files)
      hash.update(relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

/** Where `npm run build` records the hash of the sources it built. */
export const BUILD_HASH_FILE = join('.tmp', 'build-source.hash');

// Fails when package-lock.json would make `npm ci` refuse a fresh clone on some platform: every optional
// dependency a locked package names (the per-platform binaries of msgpackr-extract, unrs-resolver, ...)
// must itself be in the lock, and every dependency of package.json must be locked at a version in its range
// (the check npm ci makes, done here without the network so that lint catches the drift).
// Usage: node scripts/check-lock.mjs [DIR]   (DIR holds package.json and package-lock.json; default: the repo)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = process.argv[2] ?? fileURLToPath(new URL('..', import.meta.url));
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const packages = lock.packages ?? {};
const problems = [];

/** Where node would find `name` from the package installed at `from` (walking up the node_modules chain). */
function resolve(from, name) {
  let dir = from;
  for (;;) {
    const candidate = dir === '' ? `node_modules/${name}` : `${dir}/node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (dir === '') return undefined;
    const cut = dir.lastIndexOf('/node_modules/');
    dir = cut === -1 ? '' : dir.slice(0, cut);
  }
}

for (const [location, entry] of Object.entries(packages)) {
  for (const name of Object.keys(entry.optionalDependencies ?? {})) {
    if (!resolve(location, name)) {
      problems.push(`${location || 'package.json'} names optional ${name}, which the lock file lacks`);
    }
  }
}
const rootEntry = packages[''] ?? {};
for (const field of ['dependencies', 'devDependencies', 'optionalDependencies']) {
  for (const [name, range] of Object.entries(pkg[field] ?? {})) {
    if ((rootEntry[field] ?? {})[name] !== range) {
      problems.push(
        `package.json ${field}.${name} is "${range}" but the lock file says "${(rootEntry[field] ?? {})[name]}"`,
      );
    }
  }
}

if (problems.length > 0) {
  console.error('package-lock.json is out of step; npm ci would refuse it:');
  for (const problem of problems) console.error(`  - ${problem}`);
  console.error(
    "Regenerate it with this machine's npm: rm -rf node_modules package-lock.json && npm install.\n" +
      'If a platform package is missing from the registry, pin its parent in "overrides" (see CONTRIBUTING.md).',
  );
  process.exit(1);
}
console.log(
  `package-lock.json: ${Object.keys(packages).length} entries, every optional platform package locked`,
);

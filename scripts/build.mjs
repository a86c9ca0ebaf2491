#!/usr/bin/env node
// `npm run build`: the ES module build in dist/ and the CommonJS build in dist/cjs/, from the same lib/.
//
// A file `<name>.cjs.ts` in lib/ is the CommonJS stand-in for `<name>.ts` (for the few places that
// need `import.meta` in ESM and `__dirname`/`require` in CommonJS): the ESM build leaves it out, and
// the CommonJS build compiles a copy of lib/ in which it has taken the place of `<name>.ts`.
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CJS_DIR, ESM_DIR, syncPackageJson } from './entry-points.mjs';
import { BUILD_HASH_FILE, sourceHash } from './source-hash.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const cjsSource = join(root, '.tmp', 'cjs-src');
const PAGE_ASSETS = 'testing/page/assets';

function* files(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* files(path);
    else yield path;
  }
}

function compile(project) {
  execFileSync(process.execPath, [tsc, '-p', project], { cwd: root, stdio: 'inherit' });
}

const changed = syncPackageJson({ write: true });
if (changed.length) console.log(`package.json: wrote ${changed.join(', ')} from scripts/entry-points.mjs`);

const builtFrom = sourceHash(root); // the sources as this build reads them
rmSync(join(root, BUILD_HASH_FILE), { force: true }); // recorded again only once this build is whole
rmSync(join(root, ESM_DIR), { recursive: true, force: true });

// ES module build.
compile('tsconfig.build.json');

// CommonJS build: a copy of lib/ with the `.cjs.ts` stand-ins in place.
rmSync(cjsSource, { recursive: true, force: true });
cpSync(join(root, 'lib'), cjsSource, { recursive: true });
for (const path of files(cjsSource)) {
  if (path.endsWith('.cjs.ts')) renameSync(path, path.replace(/\.cjs\.ts$/, '.ts'));
}
compile('tsconfig.build.cjs.json');
rmSync(cjsSource, { recursive: true, force: true });
writeFileSync(join(root, CJS_DIR, 'package.json'), `${JSON.stringify({ type: 'commonjs' }, null, 2)}\n`);

// The sandbox page's static files, beside each build.
for (const dir of [ESM_DIR, CJS_DIR]) {
  cpSync(join(root, 'lib', PAGE_ASSETS), join(root, dir, PAGE_ASSETS), { recursive: true });
}
chmodSync(join(root, ESM_DIR, 'testing', 'sandbox.cli.js'), 0o755);
chmodSync(join(root, ESM_DIR, 'outbox', 'outbox-setup.cli.js'), 0o755);
mkdirSync(join(root, '.tmp'), { recursive: true });
writeFileSync(join(root, BUILD_HASH_FILE), `${builtFrom}\n`);
console.log(`built ${relative(root, join(root, ESM_DIR))}/ (ES modules) and ${CJS_DIR}/ (CommonJS)`);

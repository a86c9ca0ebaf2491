#!/usr/bin/env node
// The package's entry points, in one place. `npm run build` writes `exports`, `typesVersions`, `main`
// and `types` of package.json from this list; `npm run lint` runs this file with --check and fails
// when package.json does not match it.
//
// ADDING AN ENTRY POINT IS ONE LINE BELOW (subpath -> its index file under lib/, without `.ts`),
// then `npm run build` and commit package.json.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Subpath of the package -> source file under lib/ (no extension). */
export const ENTRY_POINTS = {
  '.': 'index',
  './testing': 'kit/index',
  './queue': 'queue/index',
  './outbox': 'outbox/index',
};

/** Where each build goes: the ES module build in dist/, the CommonJS build in dist/cjs/. */
export const ESM_DIR = 'dist';
export const CJS_DIR = 'dist/cjs';

/** The package.json fields that follow from ENTRY_POINTS. */
export function entryFields() {
  const exports = {};
  const typesVersions = {};
  for (const [subpath, file] of Object.entries(ENTRY_POINTS)) {
    exports[subpath] = {
      import: { types: `./${ESM_DIR}/${file}.d.ts`, default: `./${ESM_DIR}/${file}.js` },
      require: { types: `./${CJS_DIR}/${file}.d.ts`, default: `./${CJS_DIR}/${file}.js` },
    };
    // TypeScript's classic `node` (node10) resolution ignores `exports`: it finds a subpath's types here.
    if (subpath !== '.') typesVersions[subpath.slice(2)] = [`${CJS_DIR}/${file}.d.ts`];
  }
  exports['./package.json'] = './package.json';
  return {
    main: `./${CJS_DIR}/${ENTRY_POINTS['.']}.js`,
    types: `./${CJS_DIR}/${ENTRY_POINTS['.']}.d.ts`,
    exports,
    typesVersions: { '*': typesVersions },
  };
}

const PACKAGE_JSON = join(dirname(fileURLToPath(import.meta.url)), '..', 'package.json');

/** Writes the fields into package.json when they differ; returns the names of the fields it changed. */
export function syncPackageJson({ write }) {
  const pkg = JSON.parse(readFileSync(PACKAGE_JSON, 'utf8'));
  const changed = [];
  for (const [field, value] of Object.entries(entryFields())) {
    if (JSON.stringify(pkg[field]) !== JSON.stringify(value)) {
      changed.push(field);
      pkg[field] = value;
    }
  }
  if (write && changed.length) writeFileSync(PACKAGE_JSON, `${JSON.stringify(pkg, null, 2)}\n`);
  return changed;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check');
  const changed = syncPackageJson({ write: !check });
  if (check && changed.length) {
    console.error(
      `package.json ${changed.join(', ')} do not match scripts/entry-points.mjs: run \`npm run build\` and commit package.json`,
    );
    process.exit(1);
  }
  if (!check && changed.length)
    console.log(`package.json: wrote ${changed.join(', ')} from scripts/entry-points.mjs`);
}

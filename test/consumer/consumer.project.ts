import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from './consumer.process.js';
import { documentedSpecs, type NestMajor } from './install-lines.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');

/** This package's name in the install lines, installed from the packed tarball instead of the registry. */
const PACKAGE = 'nestjs-transactional-email';

/**
 * Copies the fixture project `fixtures/<major>` (what `nest new` of that major gives, plus our test files)
 * to `dir/<major>`, adds to its dependencies exactly what the documented install lines of that major
 * name (docs/getting-started.md, `<!-- install-lines: <major> -->`, then the ORMs of docs/outbox.md,
 * `<!-- install-lines: <major>-orms -->`; this package from `tarball`), and
 * installs it (`npm install`, from the npm cache when it can, the registry otherwise).
 */
export async function createConsumer(dir: string, tarball: string, major: NestMajor): Promise<string> {
  const root = join(dir, major);
  cpSync(join(FIXTURES, major), root, { recursive: true });
  const pkgPath = join(root, 'package.json');
  const pkg = JSON.parse(readFileSync(pkgPath, 'utf8')) as { dependencies: Record<string, string> };
  for (const { name, range } of documentedSpecs(major))
    pkg.dependencies[name] = name === PACKAGE ? `file:${tarball}` : range;
  writeFileSync(pkgPath, JSON.stringify(pkg, null, 2));
  await run(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'],
    root,
    240_000,
  );
  return root;
}

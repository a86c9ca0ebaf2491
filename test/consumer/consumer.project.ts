import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from './consumer.process.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');

/** Placeholder in a fixture's package.json for the packed tarball's path. */
const TARBALL = '__TARBALL__';

/**
 * Copies the fixture project `fixtures/<name>` to `dir/<name>`, points its dependency on this package
 * at `tarball`, and installs it (`npm install`, from the npm cache when it can, the registry otherwise).
 */
export async function createConsumer(dir: string, tarball: string, name: string): Promise<string> {
  const root = join(dir, name);
  cpSync(join(FIXTURES, name), root, { recursive: true });
  const pkgPath = join(root, 'package.json');
  writeFileSync(pkgPath, readFileSync(pkgPath, 'utf8').replace(TARBALL, tarball));
  await run(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'],
    root,
    240_000,
  );
  return root;
}

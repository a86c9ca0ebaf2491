import { cpSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from './consumer.process.js';
import { installSpecs, type InstallBlock, type NestMajor } from './install-lines.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');

/** This package's name in the install lines, installed from the packed tarball instead of the registry. */
const PACKAGE = 'nestjs-transactional-email';

const NPM_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'];

/** The words of `npm install` for one block, as a user types them (this package from `tarball`). */
function installWords(block: InstallBlock, tarball: string): string[] {
  return installSpecs(block).map(({ name, range }) =>
    name === PACKAGE ? tarball : range === 'latest' ? name : `${name}@${range}`,
  );
}

/**
 * Copies the fixture project `fixtures/<major>` (what `nest new` of that major gives, plus our test files)
 * to `dir/<major>` and installs, one `npm install <packages>` after the other as a user would, the documented
 * blocks of that major: docs/getting-started.md (`<!-- install-lines: <major> -->`; this package from
 * `tarball`), then the ORMs of docs/outbox.md (`<!-- install-lines: <major>-orms -->`). In that order a
 * package the first block puts at the top level (ioredis 6, say) meets the second block's peers, as it does
 * in an app: one install of both would let npm pick versions that suit them all and hide the conflict.
 */
export async function createConsumer(dir: string, tarball: string, major: NestMajor): Promise<string> {
  const root = join(dir, major);
  cpSync(join(FIXTURES, major), root, { recursive: true });
  for (const block of [major, `${major}-orms`] as const)
    await run('npm', ['install', ...NPM_FLAGS, ...installWords(block, tarball)], root, 300_000);
  return root;
}

import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from './consumer.process.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');

/** The dependencies both consumers share besides Nest itself. */
const COMMON_DEPS = {
  'reflect-metadata': '^0.2.2',
  rxjs: '^7.8.0',
  'class-validator': '^0.15.1',
  'class-transformer': '^0.5.1',
};

/** A fresh consumer project: where it is and which fixture files it got. */
export interface ConsumerSpec {
  name: string;
  type: 'module' | 'commonjs';
  /** Nest major version to install. */
  nest: 11 | 12;
  /** Extra dependencies (TypeScript, types). */
  extraDeps?: Record<string, string>;
  /** Fixture files: [path under fixtures/, path in the project]. */
  files: Array<[string, string]>;
}

/**
 * Creates `dir/<name>` with a package.json that depends on the tarball and the fixture files copied
 * in, then installs it (from the npm cache when it can, the registry otherwise).
 */
export async function createConsumer(dir: string, tarball: string, spec: ConsumerSpec): Promise<string> {
  const root = join(dir, spec.name);
  mkdirSync(root, { recursive: true });
  const nest = `^${spec.nest}.0.0`;
  const pkg = {
    name: spec.name,
    private: true,
    type: spec.type,
    dependencies: {
      'nestjs-transactional-email': `file:${tarball}`,
      '@nestjs/common': nest,
      '@nestjs/core': nest,
      ...COMMON_DEPS,
      ...spec.extraDeps,
    },
  };
  writeFileSync(join(root, 'package.json'), JSON.stringify(pkg, null, 2));
  for (const [from, to] of spec.files) {
    mkdirSync(dirname(join(root, to)), { recursive: true });
    copyFileSync(join(FIXTURES, from), join(root, to));
  }
  await run(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'],
    root,
    180_000,
  );
  return root;
}

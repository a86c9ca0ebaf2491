// Installs the dev dependencies (npm ci) when a fresh clone has none yet, so that
// `npm run sample` and `npm test` work as the first command after cloning.
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

const needed = ['typescript', 'jest', '@nestjs/core', 'undici'];
const missing = needed.filter(
  (name) => !existsSync(new URL(`../node_modules/${name}/package.json`, import.meta.url)),
);
if (missing.length > 0) {
  console.log(`Installing dependencies first (missing: ${missing.join(', ')}) ...`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const cwd = new URL('..', import.meta.url);
  let run = spawnSync(npm, ['ci', '--no-audit', '--no-fund'], { cwd, stdio: 'inherit' });
  if (run.status !== 0) {
    console.log('npm ci failed; trying npm install ...');
    run = spawnSync(npm, ['install', '--no-audit', '--no-fund'], { cwd, stdio: 'inherit' });
  }
  if (run.status !== 0) process.exit(run.status ?? 1);
}

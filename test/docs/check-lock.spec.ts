// CI fails on a lock file that `npm ci` would refuse on some platform: scripts/check-lock.mjs (run by
// `npm run lint` and .ci/run) run on copies of this repository's package.json and package-lock.json.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const repo = process.cwd();
const script = join(repo, 'scripts', 'check-lock.mjs');

describe('scripts/check-lock.mjs', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'check-lock-'));
    for (const file of ['package.json', 'package-lock.json']) copyFileSync(join(repo, file), join(dir, file));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const check = () => spawnSync(process.execPath, [script, dir], { encoding: 'utf8' });
  const editLock = (edit: (lock: { packages: Record<string, any> }) => void) => {
    const lock = JSON.parse(readFileSync(join(dir, 'package-lock.json'), 'utf8'));
    edit(lock);
    writeFileSync(join(dir, 'package-lock.json'), JSON.stringify(lock));
  };

  it("passes on this repository's lock file", () => {
    const run = check();
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/every optional platform package locked/);
  });

  it('fails when an optional platform package is missing, naming it and how to regenerate the lock', () => {
    const missing = 'node_modules/@msgpackr-extract/msgpackr-extract-darwin-arm64';
    editLock((lock) => {
      expect(lock.packages[missing]).toBeDefined();
      delete lock.packages[missing];
    });
    const run = check();
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(
      /names optional @msgpackr-extract\/msgpackr-extract-darwin-arm64, which the lock file lacks/,
    );
    expect(run.stderr).toMatch(/rm -rf node_modules package-lock\.json && npm install/);
  });

  it('fails when package.json and the lock file disagree on a range', () => {
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    pkg.dependencies.undici = '^6.0.0';
    writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg));
    const run = check();
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/package\.json dependencies\.undici is "\^6\.0\.0" but the lock file says/);
  });
});

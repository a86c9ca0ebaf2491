// The timing check (scripts/check-spec-timing.mjs, run by `npm run lint`) refuses a spec that asserts a
// tight bound on elapsed time, naming the file and the line, and lets lower bounds and slack through.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const script = join(process.cwd(), 'scripts', 'check-spec-timing.mjs');

/** Runs the check on one spec file of `lines` and returns its exit status and error output. */
function check(dir: string, name: string, lines: string[]): { status: number | null; stderr: string } {
  const file = join(dir, name);
  writeFileSync(file, lines.join('\n'));
  const run = spawnSync(process.execPath, [script, file], { encoding: 'utf8' });
  return { status: run.status, stderr: run.stderr };
}

describe('scripts/check-spec-timing.mjs', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'spec-timing-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    [
      'a literal bound on Date.now()',
      ['const started = Date.now();', 'expect(Date.now() - started).toBeLessThan(1000);'],
    ],
    [
      'a variable computed from the clock',
      [
        'const t = performance.now();',
        'const took = performance.now() - t;',
        'expect(took).toBeLessThanOrEqual(500);',
      ],
    ],
    [
      'a bound held in a constant',
      [
        'const TIMEOUT_MS = 200;',
        'const t = Date.now();',
        'expect(Date.now() - t).toBeLessThan(TIMEOUT_MS + 1000);',
      ],
    ],
    [
      'process.hrtime',
      [
        'const t = process.hrtime.bigint();',
        'expect(Number(process.hrtime.bigint() - t) / 1e6).toBeLessThan(2_000);',
      ],
    ],
  ])('refuses %s, naming the file and the line', (_, lines) => {
    const { status, stderr } = check(dir, 'tight.spec.ts', lines);
    expect(status).toBe(1);
    expect(stderr).toContain(`tight.spec.ts:${lines.length}: a bound under 5000 ms on elapsed time`);
  });

  it('lets through lower bounds, bounds with slack, and bounds on values that are not times', () => {
    const { status, stderr } = check(dir, 'fine.spec.ts', [
      'const started = Date.now();',
      'expect(Date.now() - started).toBeGreaterThanOrEqual(950);',
      'expect(Date.now() - started).toBeLessThan(10_000);',
      'expect(requests.length).toBeLessThan(3);',
    ]);
    expect(stderr).toBe('');
    expect(status).toBe(0);
  });
});

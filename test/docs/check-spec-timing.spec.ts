// The timing check (scripts/check-spec-timing.mjs, run by `npm run lint`) refuses a spec that asserts a
// tight bound on elapsed time, naming the file and the line, and lets lower bounds and slack through.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const script = join(process.cwd(), 'scripts', 'check-spec-timing.mjs');

/** Writes each spec file of `files` (name: lines) into `dir`, runs the check on all of them at once. */
function check(dir: string, files: Record<string, string[]>): { status: number | null; stderr: string } {
  const paths = Object.entries(files).map(([name, lines]) => {
    writeFileSync(join(dir, name), lines.join('\n'));
    return join(dir, name);
  });
  const run = spawnSync(process.execPath, [script, ...paths], { encoding: 'utf8' });
  return { status: run.status, stderr: run.stderr };
}

/** Spec files with one tight bound each, on their last line. */
const TIGHT: Array<[string, string[]]> = [
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
];

describe('scripts/check-spec-timing.mjs', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'spec-timing-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // one run over every case (each run loads TypeScript, which is what costs), each file named on its line
  it('refuses each tight bound, naming the file and the line', () => {
    const files = Object.fromEntries(TIGHT.map(([, lines], i) => [`tight-${i}.spec.ts`, lines]));
    const { status, stderr } = check(dir, files);
    expect(status).toBe(1);
    const named = TIGHT.map(([what, lines], i) => ({
      what,
      named: stderr.includes(`tight-${i}.spec.ts:${lines.length}: a bound under 5000 ms on elapsed time`),
    }));
    expect(named).toEqual(TIGHT.map(([what]) => ({ what, named: true })));
    expect(stderr).toContain(`check-spec-timing: ${TIGHT.length} tight elapsed-time bound(s)`);
  });

  it('lets through lower bounds, bounds with slack, and bounds on values that are not times', () => {
    const { status, stderr } = check(dir, {
      'fine.spec.ts': [
        'const started = Date.now();',
        'expect(Date.now() - started).toBeGreaterThanOrEqual(950);',
        'expect(Date.now() - started).toBeLessThan(10_000);',
        'expect(requests.length).toBeLessThan(3);',
      ],
    });
    expect(stderr).toBe('');
    expect(status).toBe(0);
  });
});

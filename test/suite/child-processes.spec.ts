import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Every process of the machine: pid and command line (from /proc). */
function processes(): Map<number, string> {
  const out = new Map<number, string>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue; // dead, not yet reaped
      out.set(Number(name), readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ').trim());
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Runs Jest on the fixture spec files with the suite's own configuration; resolves with its exit code. */
function nestedJest(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [
        join(process.cwd(), 'node_modules/jest/bin/jest.js'),
        '--testMatch',
        '**/test/suite/fixtures/*.fixture.ts',
        '--maxWorkers=3',
        '--ci',
      ],
      {
        cwd: process.cwd(),
        env: { ...process.env, ...env, NODE_OPTIONS: '--experimental-vm-modules' },
        timeout: 120_000,
      },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err.code as number) ?? null) : 0, output: stdout + stderr }),
    );
  });
}

// The suite's rule that a spec file's processes die with it (test/support/child-processes.mjs), shown on
// spec files that break it: three files, run by a Jest of their own with the suite's configuration, each
// leave a shell and two sleeps running (one of them in a process group of its own) and then fail, time
// out, or pass. The machine's processes are listed before and after: none of theirs is left.
describe('the processes a spec file starts die with it', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'email-children-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('after a failed, a timed-out and a passed file, no process of theirs runs', async () => {
    const mark = `31${String(process.pid).padStart(7, '0')}`; // the sleeps' length: theirs alone
    const pidsFile = join(dir, 'pids.txt');
    const before = processes();
    expect([...before.values()].filter((cmd) => cmd.includes(mark))).toEqual([]);

    const { code, output } = await nestedJest({ CHILDREN_MARK: mark, CHILDREN_PIDS: pidsFile });
    expect(code).toBe(1); // one file failed and one timed out, on purpose
    expect(output).toMatch(/leaves its processes running and fails/);
    expect(output).toMatch(/Exceeded timeout of 3000 ms/);
    expect(output).toMatch(/Tests: +2 failed, 1 passed, 3 total/);

    const started = readFileSync(pidsFile, 'utf8').trim().split('\n');
    expect(started).toHaveLength(3); // three trees: a shell and its two sleeps each
    const pids = started.flatMap((line) => line.split(' ').map(Number));
    expect(pids).toHaveLength(9);

    const after = processes();
    const left = [...after].filter(([pid, cmd]) => cmd.includes(mark) || pids.includes(pid));
    expect(left).toEqual([]);
    for (const pid of pids) expect(existsSync(`/proc/${pid}/cmdline`) && after.has(pid)).toBe(false);
    // and nothing else the nested run started stays: every process now running ran before it, or is not its
    // (another checkout's suite, running at the same time, may be running its own nested Jest)
    const ours = (cmd: string) =>
      cmd.includes(mark) || (cmd.includes(`${process.cwd()}/`) && cmd.includes('test/suite/fixtures'));
    const appeared = [...after].filter(([pid]) => !before.has(pid)).map(([, cmd]) => cmd);
    expect(appeared.filter(ours)).toEqual([]);
  }, 150_000);
});

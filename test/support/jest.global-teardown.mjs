// Jest's global tear-down: fails the run when a process it started is still running (killed first, and
// named), and removes the run's consumer work directory (EMAIL_KEEP_CONSUMER=1 keeps it). Its two
// installed apps take a while to delete on a busy disk, so `rm -rf` does it after Jest has exited, in a
// process of its own.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';

/** Processes that carry this run's mark (EMAIL_SUITE_RUN) other than Jest itself and its workers. */
function leftBehind(mark) {
  const out = [];
  let entries;
  try {
    entries = readdirSync('/proc');
  } catch {
    return out; // not Linux: nothing to look at
  }
  for (const name of entries) {
    const pid = Number(name);
    if (!/^\d+$/.test(name) || pid === process.pid) continue;
    try {
      if (!readFileSync(`/proc/${name}/environ`, 'utf8').split('\0').includes(`EMAIL_SUITE_RUN=${mark}`))
        continue;
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ').trim();
      if (state === 'Z' || (Number(ppid) === process.pid && cmd.includes('jest-worker'))) continue;
      out.push({ pid, cmd });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return out;
}

export default function globalTeardown() {
  const mark = process.env.EMAIL_SUITE_RUN;
  const left = mark ? leftBehind(mark) : [];
  for (const { pid } of left) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  const dir = process.env.EMAIL_CONSUMER_DIR;
  if (dir && !process.env.EMAIL_KEEP_CONSUMER) {
    if (process.platform === 'win32') rmSync(dir, { recursive: true, force: true });
    else spawn('rm', ['-rf', dir], { detached: true, stdio: 'ignore' }).unref();
  }
  if (left.length > 0)
    throw new Error(
      `the run left ${left.length} process(es) running (now killed):\n` +
        left.map(({ pid, cmd }) => `  ${pid} ${cmd.slice(0, 200)}`).join('\n'),
    );
}

// Jest's global tear-down: removes the run's consumer work directory (EMAIL_KEEP_CONSUMER=1 keeps it).
// Its two installed apps take a while to delete on a busy disk, so `rm -rf` does it after Jest has
// exited, in a process of its own.
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';

export default function globalTeardown() {
  const dir = process.env.EMAIL_CONSUMER_DIR;
  if (!dir || process.env.EMAIL_KEEP_CONSUMER) return;
  if (process.platform === 'win32') rmSync(dir, { recursive: true, force: true });
  else spawn('rm', ['-rf', dir], { detached: true, stdio: 'ignore' }).unref();
}

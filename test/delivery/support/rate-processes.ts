import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = process.cwd();

/** What one sending process reports at its end. */
export interface SenderTally {
  sent: number;
  notSent: number;
  uncertain: number;
  /** Refused by our own rateLimit before any request. */
  limited: number;
  /** 429s from the service that ended a call. */
  serviceLimited: number;
  other: number;
  recipients: number;
  ms: number;
}

/**
 * Runs test/delivery/support/rate-sender.child.mjs in a child process (plain Node with the TypeScript
 * hooks, sources in lib/) and resolves with its tally once it exits.
 */
export function runSender(env: Record<string, string>): Promise<SenderTally> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  delete childEnv.NODE_OPTIONS;
  const register = join(ROOT, 'test/nest/support/ts-esm.register.mjs');
  const script = join(ROOT, 'test/delivery/support/rate-sender.child.mjs');
  const child = spawn(
    process.execPath,
    ['--import', pathToFileURL(register).href, script, pathToFileURL(join(ROOT, 'lib')).href, 'ts'],
    { cwd: ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let errText = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (errText += d.toString()));
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (code !== 0 || line === undefined) reject(new Error(`sender exited ${code}: ${errText}`));
      else resolve(JSON.parse(line) as SenderTally);
    });
  });
}

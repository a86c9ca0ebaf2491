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
 * Runs test/delivery/support/rate-sender.child.mjs in each of `envs`' child processes at once, and starts
 * their sends together once every one has booted (printed "ready"): resolves with their tallies.
 */
export async function runSendersTogether(envs: Record<string, string>[]): Promise<SenderTally[]> {
  const senders = envs.map((env) => runSender({ ...env, START_ON_GO: '1' }));
  await Promise.all(senders.map((s) => s.ready));
  for (const s of senders) s.go();
  return Promise.all(senders.map((s) => s.tally));
}

/** A running sender: `ready` once it has booted, `go()` to start it (START_ON_GO), its `tally` at exit. */
export interface Sender {
  ready: Promise<void>;
  go(): void;
  tally: Promise<SenderTally>;
}

/**
 * Runs test/delivery/support/rate-sender.child.mjs in a child process (plain Node with the TypeScript
 * hooks, sources in lib/); its tally resolves once it exits.
 */
export function runSender(env: Record<string, string>): Sender {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  delete childEnv.NODE_OPTIONS;
  const register = join(ROOT, 'test/nest/support/ts-esm.register.mjs');
  const script = join(ROOT, 'test/delivery/support/rate-sender.child.mjs');
  const child = spawn(
    process.execPath,
    ['--import', pathToFileURL(register).href, script, pathToFileURL(join(ROOT, 'lib')).href, 'ts'],
    { cwd: ROOT, env: childEnv, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let out = '';
  let errText = '';
  let isReady: () => void;
  const ready = new Promise<void>((resolve) => (isReady = resolve));
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    if (out.startsWith('ready\n')) isReady();
  });
  child.stderr.on('data', (d: Buffer) => (errText += d.toString()));
  const tally = new Promise<SenderTally>((resolve, reject) => {
    child.once('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (code !== 0 || line === undefined) reject(new Error(`sender exited ${code}: ${errText}`));
      else resolve(JSON.parse(line) as SenderTally);
      isReady(); // a sender that died before "ready" must not keep the others waiting
    });
  });
  return { ready, go: () => child.stdin.end('go\n'), tally };
}

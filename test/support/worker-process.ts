import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = process.cwd();

/** A worker process started by `startChildWorker`. */
export interface WorkerProcess {
  child: ChildProcess;
  /** Lines it printed (`ready`, `sent <jobId> <messageId>`). */
  lines: string[];
  /** Resolves when it exits. */
  exited: Promise<number | null>;
}

/**
 * Starts `script` (a `*.child.mjs` of test/, path from the repository root) as a worker process (plain
 * Node, TypeScript hooks, sources in lib/) and waits for it to print `ready`. The queue's and the
 * outbox's process specs start their workers through it.
 */
export async function startChildWorker(
  script: string,
  env: Record<string, string>,
  timeoutMs = 60_000, // a Nest boot of a few CPU-seconds, at load 20 on two cores
): Promise<WorkerProcess> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  delete childEnv.NODE_OPTIONS;
  const register = join(ROOT, 'test/nest/support/ts-esm.register.mjs');
  const child = spawn(
    process.execPath,
    [
      '--import',
      pathToFileURL(register).href,
      join(ROOT, script),
      pathToFileURL(join(ROOT, 'lib')).href,
      'ts',
    ],
    { cwd: ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const lines: string[] = [];
  let errText = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.stderr?.on('data', (d: Buffer) => (errText += d.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`worker process not ready in ${timeoutMs} ms: ${errText}`)),
      timeoutMs,
    );
    child.stdout?.on('data', (d: Buffer) => {
      for (const line of d.toString().split('\n').filter(Boolean)) {
        lines.push(line);
        if (line === 'ready') {
          clearTimeout(timer);
          resolve();
        }
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`worker process exited (${code}) before ready: ${errText}`));
    });
  });
  return { child, lines, exited };
}

/** Waits until `check` is true (polling), or fails after `timeoutMs`. */
export async function until(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

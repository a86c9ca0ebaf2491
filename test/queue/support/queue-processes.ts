import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = process.cwd();

/** A worker process started by `startWorkerProcess`. */
export interface WorkerProcess {
  child: ChildProcess;
  /** Lines it printed (`ready`, `sent <jobId> <messageId>`). */
  lines: string[];
  /** Resolves when it exits. */
  exited: Promise<number | null>;
}

/**
 * Starts a worker process (plain Node, TypeScript hooks, sources in lib/) and waits for its `ready`.
 * `env`: REDIS_URL, EMAIL_BASE_URL, EMAIL_API_KEY, QUEUE_NAME, WORKER_OPTIONS ...
 */
export async function startWorkerProcess(
  env: Record<string, string>,
  timeoutMs = 30_000,
): Promise<WorkerProcess> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  delete childEnv.NODE_OPTIONS;
  const register = join(ROOT, 'test/nest/support/ts-esm.register.mjs');
  const script = join(ROOT, 'test/queue/support/queue-worker.child.mjs');
  const child = spawn(
    process.execPath,
    ['--import', pathToFileURL(register).href, script, pathToFileURL(join(ROOT, 'lib')).href, 'ts'],
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

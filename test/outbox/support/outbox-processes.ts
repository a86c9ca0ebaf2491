import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = process.cwd();

/** A worker process started by `startOutboxWorker`. */
export interface OutboxWorkerProcess {
  child: ChildProcess;
  /** Lines it printed (`ready`, `sent <jobId> <messageId>`). */
  lines: string[];
  /** Resolves when it exits. */
  exited: Promise<number | null>;
}

/**
 * Starts an outbox worker process (plain Node, TypeScript hooks, sources in lib/) and waits for its `ready`.
 * `env`: DATABASE_URL, EMAIL_BASE_URL, EMAIL_API_KEY, OUTBOX_SCHEMA, ATTEMPT_TIMEOUT_MS ...
 */
export async function startOutboxWorker(
  env: Record<string, string>,
  timeoutMs = 30_000,
): Promise<OutboxWorkerProcess> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  delete childEnv.NODE_OPTIONS;
  const register = join(ROOT, 'test/nest/support/ts-esm.register.mjs');
  const script = join(ROOT, 'test/outbox/support/outbox-worker.child.mjs');
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

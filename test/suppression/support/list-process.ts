import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { EmailSuppressionOptions } from '../../../lib/index.js';

const ROOT = process.cwd();

/** A second process on the same suppression list (`suppression.child.mjs`), driven line by line. */
export interface ListProcess {
  /** Sends one command and resolves with the line it answered. */
  ask(command: string): Promise<string>;
  /** Ends the process (its module closed first). */
  close(): Promise<void>;
  child: ChildProcess;
}

/**
 * Starts `suppression.child.mjs` (plain Node with the TypeScript hooks, sources in lib/) with an
 * EmailModule at `target` and `suppression`, and waits for it to print "ready".
 */
export async function startListProcess(
  target: { baseUrl: string; apiKey: string },
  suppression: EmailSuppressionOptions,
  /** The sender of its sends. */
  from = 'orders@shop.test',
): Promise<ListProcess> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    EMAIL_FROM: from,
    EMAIL_BASE_URL: target.baseUrl,
    EMAIL_API_KEY: target.apiKey,
    EMAIL_SUPPRESSION: JSON.stringify(suppression),
  };
  delete env.NODE_OPTIONS;
  const register = join(ROOT, 'test/nest/support/ts-esm.register.mjs');
  const script = join(ROOT, 'test/suppression/support/suppression.child.mjs');
  const child = spawn(
    process.execPath,
    ['--import', pathToFileURL(register).href, script, pathToFileURL(join(ROOT, 'lib')).href, 'ts'],
    { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  const waiting: Array<(line: string) => void> = [];
  const early: string[] = [];
  let errText = '';
  let buffered = '';
  child.stderr.on('data', (d: Buffer) => (errText += d.toString()));
  child.stdout.on('data', (d: Buffer) => {
    buffered += d.toString();
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      const next = waiting.shift();
      if (next) next(line);
      else early.push(line);
    }
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const nextLine = (): Promise<string> => {
    const ready = early.shift();
    if (ready !== undefined) return Promise.resolve(ready);
    return Promise.race([
      new Promise<string>((resolve) => waiting.push(resolve)),
      exited.then((code) => Promise.reject(new Error(`the list process exited (${code}): ${errText}`))),
    ]);
  };
  const first = await nextLine();
  if (first !== 'ready') throw new Error(`the list process said ${first}: ${errText}`);
  return {
    child,
    ask(command) {
      child.stdin.write(`${command}\n`);
      return nextLine();
    },
    async close() {
      child.stdin.end('quit\n');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

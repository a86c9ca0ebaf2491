import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** What a finished child process printed. */
export interface RunResult {
  stdout: string;
  stderr: string;
}

/**
 * The environment a consumer's commands get: ours, without Jest's `NODE_OPTIONS`
 * (`--experimental-vm-modules`) and without the `npm_*` variables of the `npm test` around us, so that
 * a nested `npm` or `node` behaves as in a user's own shell.
 */
export function consumerEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (name === 'NODE_OPTIONS' || /^npm_/i.test(name)) continue;
    env[name] = value;
  }
  return env;
}

/**
 * Runs `command args` in `cwd` (with `env` on top of `consumerEnv()`) and resolves with its output; rejects with an error that carries
 * both streams when it exits non-zero or outlives `timeoutMs`.
 */
export function run(
  command: string,
  args: string[],
  cwd: string,
  timeoutMs = 120_000,
  env: NodeJS.ProcessEnv = {},
): Promise<RunResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    execFile(
      command,
      args,
      { cwd, env: { ...consumerEnv(), ...env }, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        // EMAIL_CONSUMER_TIMES=1: how long each command took, to see where the consumer specs spend it
        if (process.env.EMAIL_CONSUMER_TIMES)
          process.stderr.write(
            `consumer: ${Date.now() - started} ms  ${command} ${args.join(' ')} (in ${cwd})\n`,
          );
        if (err) {
          const what = `${command} ${args.join(' ')} (in ${cwd})`;
          const why = err.killed ? `timed out after ${timeoutMs} ms (a busy machine?)` : err.message;
          reject(new Error(`${what} failed: ${why}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`));
          return;
        }
        resolve({ stdout, stderr });
      },
    );
  });
}

/** The JSON a fixture prints on its `CONSUMER_RESULT` line. */
export function consumerResult(stdout: string): Record<string, unknown> {
  const line = stdout.split('\n').find((l) => l.startsWith('CONSUMER_RESULT '));
  if (!line) throw new Error(`no CONSUMER_RESULT line in:\n${stdout}`);
  return JSON.parse(line.slice('CONSUMER_RESULT '.length)) as Record<string, unknown>;
}

/** Counts of a test run, from the JSON results file Jest (`--json`) or Vitest (`--reporter=json`) wrote. */
export function testRunCounts(resultsFile: string): { passed: number; failed: number } {
  const r = JSON.parse(readFileSync(resultsFile, 'utf8')) as {
    numPassedTests: number;
    numFailedTests: number;
    numRuntimeErrorTestSuites?: number;
  };
  return { passed: r.numPassedTests, failed: r.numFailedTests + (r.numRuntimeErrorTestSuites ?? 0) };
}

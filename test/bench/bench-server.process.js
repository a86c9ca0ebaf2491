// The bench server (bench-server.js) in a process of its own, for the benches that need one.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Starts the bench server in a child process and answers its base URL and a stop, or uses `baseUrl` when
 * given (an existing server: nothing to stop). Rejects, naming the exit code, when the server exits first.
 */
export async function benchServer(baseUrl = process.argv[2]) {
  if (baseUrl) return { baseUrl, stop: async () => undefined };
  const child = spawn(process.execPath, [fileURLToPath(new URL('./bench-server.js', import.meta.url))], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise((ok, fail) => {
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (c) => {
      out += c;
      if (out.includes('\n')) ok(JSON.parse(out.split('\n')[0]).port);
    });
    child.once('exit', (code) => fail(new Error(`bench server exited with ${code}`)));
  });
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    stop: () => new Promise((done) => (child.once('close', done), child.kill('SIGTERM'))),
  };
}

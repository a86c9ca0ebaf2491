// `npm run bench`: EmailService against the clients users would otherwise pick, side by side, in one run.
// The JSON server runs in a process of its own on CPU 1, each measurement in a fresh process on CPU 0
// (taskset, when the machine has it and two CPUs). Clients run in alternating rounds; the better round
// (higher throughput) of each is reported. Prints a table, then, as its very last line, one JSON object
// with every figure. A figure that could not be measured is named with the reason (the failing script's
// error) in the table and in the JSON (`missing`), and the run exits 1. Knobs (environment): BENCH_N,
// BENCH_ROUNDS, BENCH_RSS_SENDS, BENCH_WARMUP, BENCH_CONCURRENCY.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { CONNECTIONS } from './clients/payload.js';
import { round } from './load.js';
import { addJobTargets, CLIENTS, missingFigures, summarize, table } from './report.js';

const here = (file) => fileURLToPath(new URL(file, import.meta.url));
const N = Number(process.env.BENCH_N ?? 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const RSS_SENDS = Number(process.env.BENCH_RSS_SENDS ?? 50_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3_000);

const pinning =
  process.platform === 'linux' && cpus().length >= 2 && spawnSync('taskset', ['-V']).status === 0;

/** A node process, on `cpu` when pinning is possible. */
function nodeProcess(cpu, args, env = {}) {
  const [command, argv] = pinning
    ? ['taskset', ['-c', String(cpu), process.execPath, ...args]]
    : [process.execPath, args];
  return spawn(command, argv, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
}

/** What a script said about its failure: its last error line (or its last lines when none reads as one). */
function lastWords(err) {
  const lines = err
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('at ') && !line.startsWith('^'));
  const errors = lines.filter((line) => /cannot measure|Error\b|error:|FAILED/.test(line));
  return errors.length > 0 ? errors[errors.length - 1] : lines.slice(-3).join(' / ');
}

/**
 * Runs a node script to its end and returns the last JSON line it printed. Its stderr is shown as it
 * comes and kept: when the script fails, the error says what it printed last.
 */
function runJson(cpu, args, env) {
  const name = args.find((arg) => arg.endsWith('.js'))?.replace(/.*\//, '') ?? args.join(' ');
  return new Promise((resolve, reject) => {
    const child = nodeProcess(cpu, args, env);
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => {
      err += chunk;
      process.stderr.write(chunk);
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const last = out.trim().split('\n').pop() ?? '';
      if (code !== 0 || !last.startsWith('{')) {
        const how = signal ? `was killed by ${signal}` : `exited with ${code}`;
        const said = lastWords(err) || lastWords(out) || 'it printed nothing';
        reject(new Error(`${name} ${how}${code === 0 ? ' without a JSON line' : ''}: ${said}`));
      } else {
        try {
          resolve(JSON.parse(last));
        } catch (parseError) {
          reject(new Error(`${name} printed a last line that is not JSON: ${parseError.message}`));
        }
      }
    });
  });
}

/** Starts the JSON server and waits for its port. */
function startServer() {
  return new Promise((resolve, reject) => {
    const child = nodeProcess(1, [here('./bench-server.js')]);
    let out = '';
    child.stdout.setEncoding('utf8');
    let started = false;
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (started || !out.includes('\n')) return;
      started = true;
      const { port } = JSON.parse(out.split('\n')[0]);
      // Stopping returns the server's counters (its last line).
      const stop = () =>
        new Promise((done) => {
          child.once('close', () => done(JSON.parse(out.trim().split('\n').pop()).counts ?? null));
          child.kill('SIGTERM');
        });
      resolve({ baseUrl: `http://127.0.0.1:${port}`, stop });
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (!started) reject(new Error(`the bench server exited early (${code})`));
    });
  });
}

/**
 * A script's figures, or `{ failed }` with the reason it could not measure them (the run goes on, so
 * that every other figure is still measured, and ends with exit code 1).
 */
async function figuresOf(label, args) {
  try {
    return await runJson(0, args);
  } catch (err) {
    console.error(`${label}: cannot measure: ${err.message}`);
    return { failed: err.message };
  }
}

/** Check of the largest batch against its JSON.stringify (test/bench/validate.bench.js). */
const validationFigure = () => figuresOf('validation', [here('./validate.bench.js')]);

/** EmailQueue against a bare BullMQ worker and direct sends on the same server (test/bench/queue.bench.js). */
const queueFigures = (baseUrl) => figuresOf('queue', [here('./queue.bench.js'), baseUrl]);

/** EmailOutbox against a bare pg-boss worker on the same PostgreSQL and server (test/bench/outbox-pgboss.bench.js). */
const outboxFigures = (baseUrl) => figuresOf('outbox', [here('./outbox-pgboss.bench.js'), baseUrl]);

/** The outbox's commit-to-sent latency (idle and beside a flow) and 1 to 3 worker processes (test/bench/outbox-worker.bench.js). */
const outboxWorkerFigures = (baseUrl) =>
  figuresOf('outbox-worker', [here('./outbox-worker.bench.js'), baseUrl]);

const dist = here('../../dist/index.js');
if (!existsSync(dist)) {
  console.error('dist/index.js is missing: run `npm run build` first (npm run bench does)');
  process.exit(1);
}

const load1 = loadavg()[0];
console.log(
  `node ${process.version}, ${cpus().length} CPUs, ${pinning ? 'server on CPU 1, clients on CPU 0' : 'no CPU pinning'}; ` +
    `${N} requests per client and run, ${CONCURRENCY} in flight, ${CONNECTIONS} connections, ${ROUNDS} rounds`,
);
const server = await startServer();
const runs = Object.fromEntries(CLIENTS.map(({ key }) => [key, []]));
let rss;
let queue;
let outbox;
let outboxWorker;
let served;
try {
  for (let r = 1; r <= ROUNDS; r++) {
    for (const { file, key, label } of CLIENTS) {
      const run = await runJson(0, [here('./worker.js'), file, 'throughput', server.baseUrl]);
      runs[key].push(run);
      console.log(`round ${r} ${label.padEnd(20)} send ${run.send.rps} req/s, list ${run.list.rps} req/s`);
    }
  }
  rss = await runJson(0, ['--expose-gc', here('./worker.js'), 'email-service', 'rss', server.baseUrl]);
  console.log(`rss: ${rss.rss_before_mb} MB -> ${rss.rss_after_mb} MB after ${rss.sends} sends`);
  queue = await queueFigures(server.baseUrl);
  console.log(`queue: ${JSON.stringify(queue)}`);
  outbox = await outboxFigures(server.baseUrl);
  console.log(`outbox: ${JSON.stringify(outbox)}`);
  outboxWorker = await outboxWorkerFigures(server.baseUrl);
  console.log(`outbox worker: ${JSON.stringify(outboxWorker)}`);
} finally {
  served = await server.stop();
}
if (!served || served.unauthorized > 0 || served.missingKey > 0 || served.other > 0) {
  throw new Error(`some requests were not what the server expects: ${JSON.stringify(served)}`);
}
const validation = await validationFigure();

const { figures, results } = summarize(runs, rss, validation);
Object.assign(figures, {
  queue_vs_bare_bullmq: queue.queue_vs_bare_bullmq ?? null,
  queue_vs_direct: queue.queue_vs_direct ?? null,
  outbox_jobs_per_s: outbox.outbox_jobs_per_s ?? null,
  outbox_vs_bare_pgboss: outbox.outbox_vs_bare_pgboss ?? null,
  // Beside it, never for the target: the same bare worker given the outbox's index and statistics.
  outbox_vs_bare_pgboss_tuned: outbox.outbox_vs_bare_pgboss_tuned ?? null,
  commit_to_sent_p50_ms: outboxWorker.commit_to_sent_p50_ms ?? null,
  commit_to_sent_p99_ms: outboxWorker.commit_to_sent_p99_ms ?? null,
  commit_to_sent_loaded_p50_ms: outboxWorker.commit_to_sent_loaded_p50_ms ?? null,
  commit_to_sent_loaded_p99_ms: outboxWorker.commit_to_sent_loaded_p99_ms ?? null,
  // The same beside the same flow, for a bare pg-boss worker in the same layout and run: target <= 1.5.
  commit_to_sent_loaded_p99_vs_bare: outboxWorker.commit_to_sent_loaded_p99_vs_bare ?? null,
});
addJobTargets(figures);
// Every figure that is not a number, with why: the failing script's error, or what it was computed from.
const missing = missingFigures(figures, {
  validate_vs_stringify: validation.failed,
  queue_vs_bare_bullmq: queue.failed,
  queue_vs_direct: queue.failed,
  outbox_jobs_per_s: outbox.failed,
  outbox_vs_bare_pgboss: outbox.failed,
  outbox_vs_bare_pgboss_tuned: outbox.failed,
  commit_to_sent_p50_ms: outboxWorker.failed,
  commit_to_sent_p99_ms: outboxWorker.failed,
  commit_to_sent_loaded_p50_ms: outboxWorker.failed,
  commit_to_sent_loaded_p99_ms: outboxWorker.failed,
  commit_to_sent_loaded_p99_vs_bare: outboxWorker.failed,
});
const report = {
  ...figures,
  missing,
  clients: results,
  rounds: Object.fromEntries(
    Object.entries(runs).map(([key, list]) => [
      key,
      list.map((run) => ({ send: run.send.rps, list: run.list.rps })),
    ]),
  ),
  rss,
  queue,
  outbox,
  outbox_instances_scaling: outboxWorker.outbox_instances_scaling ?? null,
  outbox_worker: outboxWorker,
  validation,
  server: served,
  setup: {
    node: process.version,
    cpus: cpus().length,
    pinned: pinning,
    requests: N,
    rounds: ROUNDS,
    warmup: WARMUP,
    concurrency: CONCURRENCY,
    connections: CONNECTIONS,
    rss_sends: RSS_SENDS,
    loadavg_1m: [round(load1, 2), round(loadavg()[0], 2)],
  },
};

console.log('');
console.log(table({ figures, results, missing }));
console.log(JSON.stringify(report));
if (Object.keys(missing).length > 0) {
  for (const [name, why] of Object.entries(missing)) console.error(`MISSING ${name}: ${why}`);
  process.exitCode = 1;
}

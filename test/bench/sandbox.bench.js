// Throughput of the email sandbox alone: single sends per second over loopback.
// The sandbox runs in a child process pinned to one core (taskset -c 0 when available); this
// process drives the load with an undici Pool from another core. Bounded in count and time.
// Usage: npm run build && node test/bench/sandbox.bench.js
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';

const CLI = fileURLToPath(new URL('../../dist/testing/sandbox.cli.js', import.meta.url));
const CONCURRENCY = 64;
const WARMUP_MS = 1500;
const MAX_MS = 5000;
const MAX_REQUESTS = 60000;

if (!existsSync(CLI)) {
  console.error('dist/testing/sandbox.cli.js is missing: run `npm run build` first');
  process.exit(1);
}

function hasTaskset() {
  try {
    execFileSync('taskset', ['-V'], { stdio: 'ignore' });
    return availableParallelism() >= 2;
  } catch {
    return false;
  }
}

function startSandbox(pinned) {
  const [cmd, args] = pinned
    ? ['taskset', ['-c', '0', process.execPath, CLI, '--port', '0']]
    : [process.execPath, [CLI, '--port', '0']];
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('sandbox did not start within 10 s')), 10000);
    child.once('exit', (code) => reject(new Error(`sandbox exited early with code ${code}`)));
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const url = /EMAIL_BASE_URL=(\S+)/.exec(out);
      const key = /EMAIL_API_KEY=(\S+)/.exec(out);
      if (url && key) {
        clearTimeout(timer);
        resolve({ child, baseUrl: url[1], apiKey: key[1] });
      }
    });
  });
}

// CPU seconds (user + system) the sandbox process has used, from /proc (Linux); null elsewhere.
function cpuSeconds(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

function percentile(sorted, p) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : 0;
}

async function run(pool, makeRequest, durationMs, maxRequests) {
  const cpuBefore = cpuSeconds(sandboxPid);
  const latencies = [];
  let done = 0;
  let failed = 0;
  let issued = 0;
  const started = performance.now();
  const deadline = started + durationMs;
  async function worker() {
    while (issued < maxRequests && performance.now() < deadline) {
      const n = issued++;
      const t0 = performance.now();
      const res = await pool.request(makeRequest(n));
      await res.body.dump();
      latencies.push(performance.now() - t0);
      if (res.statusCode >= 300) failed++;
      done++;
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = cpuSeconds(sandboxPid);
  latencies.sort((a, b) => a - b);
  return {
    requests: done,
    failed,
    seconds: Number(seconds.toFixed(2)),
    perSecond: Math.round(done / seconds),
    p50Ms: Number(percentile(latencies, 50).toFixed(2)),
    p99Ms: Number(percentile(latencies, 99).toFixed(2)),
    sandboxCpu:
      cpuBefore === null || cpuAfter === null ? null : Math.round(((cpuAfter - cpuBefore) / seconds) * 100),
    // Requests per CPU-second the sandbox spent: what one dedicated core could serve, even when
    // other processes on the machine steal time from the measured wall clock.
    perCpuSecond:
      cpuBefore === null || cpuAfter === null || cpuAfter === cpuBefore
        ? null
        : Math.round(done / (cpuAfter - cpuBefore)),
  };
}

const pinned = hasTaskset();
if (pinned) execFileSync('taskset', ['-a', '-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
const { child, baseUrl, apiKey } = await startSandbox(pinned);
const sandboxPid = child.pid;
const pool = new Pool(baseUrl, { connections: CONCURRENCY, pipelining: 1 });
const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
// Bodies are built before the clock starts so that the load generator spends its core on HTTP.
const BODIES = Array.from({ length: 1000 }, (_, n) =>
  JSON.stringify({
    from: 'Bench <bench@example.com>',
    to: [`user${n}@example.org`],
    subject: `Order ${n} confirmed`,
    html: `<p>Thanks for order <b>${n}</b>.</p>`,
    text: `Thanks for order ${n}.`,
  }),
);
const body = (n) => BODIES[n % BODIES.length];
const send = (n) => ({ method: 'POST', path: '/emails', headers, body: body(n) });
const sendWithKey = (n) => ({
  method: 'POST',
  path: '/emails',
  headers: { ...headers, 'idempotency-key': `bench-key-${String(n).padStart(10, '0')}` },
  body: body(n),
});

try {
  console.log(`sandbox ${baseUrl} ${pinned ? 'pinned to core 0 (taskset), load from core 1' : 'not pinned'}`);
  await run(pool, send, WARMUP_MS, MAX_REQUESTS);
  const plain = await run(pool, send, MAX_MS, MAX_REQUESTS);
  console.log(
    `single sends:               ${plain.perSecond} /s  (${plain.requests} in ${plain.seconds} s, p50 ${plain.p50Ms} ms, p99 ${plain.p99Ms} ms, failed ${plain.failed}, sandbox CPU ${plain.sandboxCpu}%, ${plain.perCpuSecond} per CPU-second)`,
  );
  const keyed = await run(pool, (n) => sendWithKey(n + 10_000_000), MAX_MS, MAX_REQUESTS);
  console.log(
    `single sends, with key:     ${keyed.perSecond} /s  (${keyed.requests} in ${keyed.seconds} s, p50 ${keyed.p50Ms} ms, p99 ${keyed.p99Ms} ms, failed ${keyed.failed}, sandbox CPU ${keyed.sandboxCpu}%, ${keyed.perCpuSecond} per CPU-second)`,
  );
  // Read the newest records (older ones may have been forgotten past the sandbox's maxMessages).
  const latest = await pool.request({ method: 'GET', path: '/emails?limit=100', headers });
  const ids = (await latest.body.json()).map((m) => m.id);
  const reads = await run(
    pool,
    (n) => ({ method: 'GET', path: `/emails/${ids[n % ids.length]}`, headers }),
    MAX_MS,
    MAX_REQUESTS,
  );
  console.log(
    `reads (GET /emails/{id}):   ${reads.perSecond} /s  (${reads.requests} in ${reads.seconds} s, p50 ${reads.p50Ms} ms, p99 ${reads.p99Ms} ms, failed ${reads.failed}, sandbox CPU ${reads.sandboxCpu}%, ${reads.perCpuSecond} per CPU-second)`,
  );
  const target = 5000;
  console.log(
    `target >= ${target} sends/s on one core: wall clock ${plain.perSecond >= target ? 'met' : 'NOT met'}, ` +
      `per CPU-second ${plain.perCpuSecond >= target ? 'met' : 'NOT met'}`,
  );
  if (plain.sandboxCpu !== null && plain.sandboxCpu < 80) {
    console.log(
      `note: the sandbox used only ${plain.sandboxCpu}% of its core, so the wall-clock figure is bounded by the ` +
        'load generator or by other processes on this machine; the per-CPU-second figure is its own capacity',
    );
  }
  const failed = plain.failed + keyed.failed + reads.failed;
  if (failed > 0)
    throw new Error(`${failed} requests failed: the sandbox's figures would count errors as answers`);
  const figures = { plain: plain.perSecond, keyed: keyed.perSecond, reads: reads.perSecond };
  for (const [name, value] of Object.entries(figures)) {
    if (!(value > 0)) throw new Error(`sandbox.bench measured no ${name} requests (${value}/s)`);
  }
  console.log(
    JSON.stringify({
      bench: 'sandbox',
      pinnedToOneCore: pinned,
      concurrency: CONCURRENCY,
      sendsPerSec: plain.perSecond,
      sendsPerCpuSecond: plain.perCpuSecond,
      sandboxCpuPercent: plain.sandboxCpu,
      sendsWithKeyPerSec: keyed.perSecond,
      readsPerSec: reads.perSecond,
      p50Ms: plain.p50Ms,
      p99Ms: plain.p99Ms,
      failed,
      targetMet: plain.perSecond >= target,
    }),
  );
} finally {
  await pool.close();
  child.kill('SIGTERM');
}

// One measurement in a fresh process: `node worker.js <client> <mode> <baseUrl>`, with mode
// `throughput` (warm-up, then N sends and N lists) or `rss` (warm-up, then many sends between two
// RSS readings, each after a full garbage collection; needs --expose-gc). Prints one JSON line.
import { get } from 'node:http';
import { load, round } from './load.js';

const [clientName, mode, baseUrl] = process.argv.slice(2);
const N = Number(process.env.BENCH_N ?? 20_000);
const RSS_SENDS = Number(process.env.BENCH_RSS_SENDS ?? 50_000);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64);
const OPS = (process.env.BENCH_OPS ?? 'send,list').split(',');

const mb = (bytes) => round(bytes / (1024 * 1024), 1);

function settle() {
  if (typeof globalThis.gc !== 'function') throw new Error('the rss mode needs node --expose-gc');
  globalThis.gc();
  globalThis.gc();
}

/** The bench server's CPU time and clock (over a connection of its own, outside every client's pool). */
function serverStats() {
  return new Promise((resolve, reject) => {
    get(`${baseUrl}/__bench/stats`, { agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve(JSON.parse(text)));
    }).on('error', reject);
  });
}

/** `load`, plus how busy the server was meanwhile (near 1: the server, not the client, set the pace). */
async function measured(op, total, latencies) {
  const before = await serverStats();
  const figures = await load(op, { total, concurrency: CONCURRENCY }, latencies);
  const after = await serverStats();
  figures.server_cpu_util = round((after.cpu_ms - before.cpu_ms) / (after.at_ms - before.at_ms), 2);
  return figures;
}

async function throughput(client) {
  const figures = {};
  for (const op of OPS) await load(client[op], { total: WARMUP, concurrency: CONCURRENCY });
  for (const op of OPS) figures[op] = await measured(client[op], N);
  return figures;
}

async function rss(client) {
  const latencies = new Float64Array(RSS_SENDS);
  settle();
  const cold = process.memoryUsage.rss();
  await load(client.send, { total: WARMUP, concurrency: CONCURRENCY });
  settle();
  const before = process.memoryUsage();
  let peak = before.rss;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 100);
  const send = await measured(client.send, RSS_SENDS, latencies);
  clearInterval(sampler);
  settle();
  const after = process.memoryUsage();
  return {
    sends: RSS_SENDS,
    rps: send.rps,
    p99_ms: send.p99_ms,
    rss_cold_mb: mb(cold),
    rss_before_mb: mb(before.rss),
    rss_after_mb: mb(after.rss),
    rss_peak_mb: mb(Math.max(peak, after.rss)),
    rss_growth_mb: mb(after.rss - before.rss),
    heap_before_mb: mb(before.heapUsed),
    heap_after_mb: mb(after.heapUsed),
    heap_growth_mb: mb(after.heapUsed - before.heapUsed),
  };
}

const { createClient } = await import(`./clients/${clientName}.client.js`);
const client = await createClient(baseUrl);
try {
  const start = await serverStats();
  const figures = mode === 'rss' ? await rss(client) : await throughput(client);
  // Connections this client opened in all (the pool cap, unless the server or the client dropped some).
  figures.connections = (await serverStats()).counts.connections - start.counts.connections;
  process.stdout.write(JSON.stringify({ client: clientName, mode, ...figures }) + '\n');
} finally {
  await client.close();
}

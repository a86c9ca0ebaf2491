// The load loop shared by every measurement: N calls, a fixed number in flight, one latency per call.
import { performance } from 'node:perf_hooks';

/** Nearest-rank percentile of an ascending Float64Array. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/**
 * Runs `op` `total` times with `concurrency` calls in flight and returns throughput and latency figures.
 * Any failed call fails the whole run: a benchmark that counts errors as answers proves nothing.
 */
export async function load(op, { total, concurrency }, latencies = new Float64Array(total)) {
  let next = 0;
  const lane = async () => {
    while (next < total) {
      const i = next++;
      const started = performance.now();
      await op();
      latencies[i] = performance.now() - started;
    }
  };
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, lane));
  const elapsedMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  const sorted = latencies.subarray(0, total).sort();
  let sum = 0;
  for (let i = 0; i < sorted.length; i++) sum += sorted[i];
  return {
    requests: total,
    elapsed_ms: round(elapsedMs),
    rps: Math.round((total * 1000) / elapsedMs),
    p50_ms: round(percentile(sorted, 50)),
    p99_ms: round(percentile(sorted, 99)),
    mean_ms: round(sum / sorted.length),
    max_ms: round(sorted[sorted.length - 1]),
    cpu_us_per_req: round((cpuMs * 1000) / total, 1),
    cpu_util: round(cpuMs / elapsedMs, 2),
  };
}

/** Three decimals: microsecond resolution for milliseconds. */
export function round(value, digits = 3) {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

// `npm run bench:suppression`: what the suppression list costs besides a send's CPU (which
// `npm run bench:overhead` measures). Prints one line per figure, then one JSON line:
// - the local copy of 1,000,000 addresses: the bytes of its table, what the process's array buffers grew by
//   while it was loaded (from a memory store, so that no connection is in the figure), the load time,
//   and the time of one check of a recipient against it (suppressed and not);
// - how long an add in one module takes to reach another module's local copy (two EmailModules in this
//   process, each with its own connections, as two processes would be): Redis (the stream it follows) and
//   PostgreSQL (LISTEN), p50/p99/max over `BENCH_SUPPRESSION_ADDS` adds (default 200), one at a time.
// Knobs (environment): BENCH_SUPPRESSION_ENTRIES (default 1,000,000), BENCH_SUPPRESSION_ADDS.
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { loadavg } from 'node:os';
import { failLoudly, requireFigures, within } from './loud.js';
import { suppressedAddress } from './suppressed.js';
import { startPostgres } from '../support/postgres-server.mjs';
import { startRedis } from '../support/redis-server.mjs';

failLoudly('suppression.bench');

const ENTRIES = Number(process.env.BENCH_SUPPRESSION_ENTRIES ?? 1_000_000);
const ADDS = Number(process.env.BENCH_SUPPRESSION_ADDS ?? 200);

const { MemorySuppressionStore } = await import('../../dist/suppression/memory-suppression.store.js');
const { SuppressionGate } = await import('../../dist/suppression/suppression.engine.js');
const { EmailModule, EmailSuppressions } = await import('../../dist/index.js');

const mb = (bytes) => Number((bytes / 2 ** 20).toFixed(1));
const gc = () => globalThis.gc?.();

/** The local copy of `ENTRIES` addresses, loaded from a memory store: its size and its load time. */
async function localCopy() {
  const store = new MemorySuppressionStore();
  for (let i = 0; i < ENTRIES; i += 10_000) {
    const ops = [];
    for (let k = i; k < Math.min(ENTRIES, i + 10_000); k++)
      ops.push({ field: `m\n${suppressedAddress(k)}`, entry: { code: 1, since: 1, time: 0 } });
    await store.write(ops, Date.now());
  }
  const options = {
    enabled: true,
    store: { kind: 'memory' },
    learn: 'account',
    partial: 'refuse',
    whenStoreDown: 'last-known',
    maxLocalEntries: 2_000_000,
    commandTimeoutMs: 10_000,
  };
  const gate = new SuppressionGate({ store, options, observer: {}, logger: false });
  gc();
  const before = process.memoryUsage();
  const started = performance.now();
  await gate.open();
  const loadMs = performance.now() - started;
  gc();
  const after = process.memoryUsage();
  const { mirror } = gate;
  return {
    gate,
    figures: {
      local_copy_entries: mirror.set.size,
      local_copy_table_mb: mb(mirror.set.bytes),
      local_copy_array_buffers_mb: mb(after.arrayBuffers - before.arrayBuffers),
      local_copy_load_ms: Math.round(loadMs),
    },
  };
}

/** One check of a recipient against a copy of `ENTRIES`, in ns (the gate's own `screen`, no send around it). */
function checkCost(gate) {
  const time = (recipient) => {
    const n = 1_000_000;
    for (let i = 0; i < 100_000; i++) gate.screen([recipient], undefined);
    const started = process.hrtime.bigint();
    for (let i = 0; i < n; i++) gate.screen([recipient], undefined);
    return Number((Number(process.hrtime.bigint() - started) / n).toFixed(1));
  };
  return {
    check_ns_not_suppressed: time('Ada Lovelace <ada@example.com>'),
    check_ns_suppressed: time(suppressedAddress(ENTRIES >> 1)),
  };
}

/** Milliseconds from an add in one module to its arrival in the other's local copy, `ADDS` times. */
async function propagation(suppression) {
  const boot = () =>
    NestFactory.createApplicationContext(
      EmailModule.forRoot({
        apiKey: 'sk_test_bench_propagation_key_0001',
        baseUrl: 'http://127.0.0.1:9',
        logger: false,
        suppression,
      }),
      { logger: false },
    );
  const [writer, reader] = [await boot(), await boot()];
  try {
    const list = writer.get(EmailSuppressions);
    const copy = reader.get(SuppressionGate).mirror;
    const writerCopy = writer.get(SuppressionGate).mirror;
    const ms = [];
    for (let i = 0; i < ADDS; i++) {
      const started = performance.now();
      await list.add(`propagated-${i}-${Date.now()}@bench.example.com`, { reason: 'bounced' });
      const version = writerCopy.version;
      await within(
        (async () => {
          while (copy.version < version) await new Promise((r) => setImmediate(r));
        })(),
        10_000,
        'an add reaching the other copy',
      );
      ms.push(performance.now() - started);
    }
    ms.sort((a, b) => a - b);
    const at = (q) => Number(ms[Math.min(ms.length - 1, Math.floor(q * ms.length))].toFixed(2));
    return { p50: at(0.5), p99: at(0.99), max: Number(ms[ms.length - 1].toFixed(2)) };
  } finally {
    await Promise.all([writer.close(), reader.close()]);
  }
}

const load = loadavg()[0].toFixed(2);
const copy = await localCopy();
const checks = checkCost(copy.gate);
await copy.gate.close();
const [redis, postgres] = await Promise.all([startRedis(), startPostgres()]);
let redisMs;
let postgresMs;
try {
  redisMs = await propagation({ redis: redis.url, prefix: `bench-${process.pid}` });
  postgresMs = await propagation({ postgres: postgres.url, schema: `bench_${process.pid}` });
} finally {
  await Promise.all([redis.stop(), postgres.stop()]);
}
const result = {
  ...copy.figures,
  ...checks,
  propagation_redis_ms_p50: redisMs.p50,
  propagation_redis_ms_p99: redisMs.p99,
  propagation_redis_ms_max: redisMs.max,
  propagation_postgres_ms_p50: postgresMs.p50,
  propagation_postgres_ms_p99: postgresMs.p99,
  propagation_postgres_ms_max: postgresMs.max,
  adds: ADDS,
  load_1m: Number(load),
};
requireFigures(result, Object.keys(result), 'suppression.bench');
console.log(
  `local copy of ${result.local_copy_entries} addresses: table ${result.local_copy_table_mb} MB, ` +
    `array buffers +${result.local_copy_array_buffers_mb} MB, loaded in ${result.local_copy_load_ms} ms`,
);
console.log(
  `one check against it: ${result.check_ns_not_suppressed} ns (not suppressed), ${result.check_ns_suppressed} ns (suppressed)`,
);
console.log(
  `an add reaching another module's copy (add included): Redis p50 ${redisMs.p50} ms, p99 ${redisMs.p99} ms, max ${redisMs.max} ms; ` +
    `PostgreSQL p50 ${postgresMs.p50} ms, p99 ${postgresMs.p99} ms, max ${postgresMs.max} ms (${ADDS} adds; load ${load})`,
);
console.log(JSON.stringify(result));

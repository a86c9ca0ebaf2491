// The churn run of `npm run bench:accounts`: many accounts, each seen once, with a short cache TTL. An app that
// serves tens of thousands of customers sees most of them rarely; memory must follow the accounts in use, not
// every account ever served. One EmailModule (dist/) in this process sends a list call for each of
// BENCH_ACCOUNTS_CHURN (50,000) accounts, each under its own key, over BENCH_ACCOUNTS_CHURN_SECONDS (60), with
// accountCacheTtlMs BENCH_ACCOUNTS_CHURN_TTL_MS (1,000), to a node:http server on loopback. The heap is read
// after full collections (node --expose-gc): at the start (after a warm-up of 1,000 accounts that have come
// and gone), at its peak during the run, and once every account's TTL and its state's linger have passed.
// Figures: churn_heap_growth_mb (end less start; target < 10), churn_heap_peak_mb, churn_held_after
// (accounts still held: target 0), churn_calls, churn_failed, churn_calls_per_s.
import 'reflect-metadata';
import { createServer } from 'node:http';
import { NestFactory } from '@nestjs/core';
import { EmailModule, EmailService } from '../../dist/index.js';
import { EmailAccounts, ACCOUNT_STATE_LINGER_MS } from '../../dist/delivery/email-accounts.store.js';

const MB = 1024 * 1024;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The heap in MB after full collections (several: weak references and finalizers take more than one). */
async function heapMb() {
  for (let i = 0; i < 4; i++) {
    globalThis.gc();
    await sleep(20);
  }
  return process.memoryUsage().heapUsed / MB;
}

/** Runs the churn and answers its figures. */
export async function churnRun({
  accounts = Number(process.env.BENCH_ACCOUNTS_CHURN ?? 50_000),
  seconds = Number(process.env.BENCH_ACCOUNTS_CHURN_SECONDS ?? 60),
  ttlMs = Number(process.env.BENCH_ACCOUNTS_CHURN_TTL_MS ?? 1_000),
} = {}) {
  if (typeof globalThis.gc !== 'function') throw new Error('the churn run needs node --expose-gc');
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': 2 });
    res.end('[]');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${server.address().port}`;
  const app = await NestFactory.createApplicationContext(
    {
      module: class AccountsChurnBench {},
      imports: [
        EmailModule.forRoot({
          baseUrl,
          accounts: (id) => ({ apiKey: `sk_churn_${id}_0123456789abcdef` }),
          accountCacheTtlMs: ttlMs,
          maxRetries: 0,
          logger: false,
        }),
      ],
    },
    { logger: false },
  );
  try {
    const email = app.get(EmailService);
    const held = () => {
      const h = app.get(EmailAccounts).held;
      return h.resolved + h.resting;
    };
    const settle = ttlMs + ACCOUNT_STATE_LINGER_MS + 2_000; // every desk expired, every state quiet, swept
    const seeAll = async (prefix, n, overMs) => {
      let failed = 0;
      const batch = 50;
      const t0 = Date.now();
      for (let i = 0; i < n; i += batch) {
        const due = t0 + (i / n) * overMs;
        if (due > Date.now()) await sleep(due - Date.now());
        const calls = [];
        for (let k = i; k < Math.min(n, i + batch); k++)
          calls.push(email.list({ account: `${prefix}-${k}`, limit: 1 }).catch(() => failed++));
        await Promise.all(calls);
      }
      return { failed, ms: Date.now() - t0 };
    };

    await seeAll('warm', 1_000, 1_000);
    await sleep(settle);
    const start = await heapMb();
    let peak = start;
    let peakHeld = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().heapUsed / MB);
      peakHeld = Math.max(peakHeld, held());
    }, 500);
    const run = await seeAll('churn', accounts, seconds * 1000);
    clearInterval(sampler);
    await sleep(settle);
    const end = await heapMb();
    return {
      churn_accounts: accounts,
      churn_seconds: seconds,
      churn_ttl_ms: ttlMs,
      churn_calls: accounts,
      churn_failed: run.failed,
      churn_calls_per_s: Math.round(accounts / (run.ms / 1000)),
      churn_heap_start_mb: Number(start.toFixed(1)),
      churn_heap_peak_mb: Number(peak.toFixed(1)),
      churn_heap_end_mb: Number(end.toFixed(1)),
      churn_heap_growth_mb: Number((end - start).toFixed(2)),
      churn_held_peak: peakHeld,
      churn_held_after: held(),
    };
  } finally {
    await app.close();
    await new Promise((resolve) => server.close(resolve));
  }
}

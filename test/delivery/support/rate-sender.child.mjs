// A sending process for the rate-limit specs and `npm run bench:rate`: EmailModule on the sandbox with
// the `rateLimit` option of RATE_LIMIT (JSON; none when empty), sending COUNT emails tagged TAG.
// Run in plain Node with the TypeScript hooks (specs) or against dist/ (bench):
//   node rate-sender.child.mjs <lib dir URL> <ext>
// env: EMAIL_BASE_URL, EMAIL_API_KEY, RATE_LIMIT, COUNT, CONCURRENCY (parallel sends), MAX_TO (1 to 3
// recipients by default), MODE ('send' or 'sendMany'), TIMEOUT_MS, MAX_RETRIES, START_AT (epoch ms to
// start, so that every process starts together) or START_ON_GO=1 (start on a line read from stdin: the
// specs send it once every process has printed "ready").
// Prints "ready", then one JSON line: { sent, notSent, uncertain, limited, serviceLimited, other, ms }.
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';

const [libUrl, ext = 'ts'] = process.argv.slice(2);
const lib = await import(`${libUrl}/index.${ext}`);
const env = process.env;
const rateLimit = env.RATE_LIMIT ? JSON.parse(env.RATE_LIMIT) : undefined;
const count = Number(env.COUNT ?? 100);
const concurrency = Number(env.CONCURRENCY ?? 8);
const maxTo = Number(env.MAX_TO ?? 3);
const tag = env.TAG ?? `p${process.pid}`;

class SenderApp {}
Module({
  imports: [
    lib.EmailModule.forRoot({
      apiKey: env.EMAIL_API_KEY,
      baseUrl: env.EMAIL_BASE_URL,
      logger: false,
      timeoutMs: Number(env.TIMEOUT_MS ?? 30_000),
      maxRetries: Number(env.MAX_RETRIES ?? 2),
      rateLimit,
    }),
  ],
})(SenderApp);

const app = await NestFactory.createApplicationContext(SenderApp, { logger: false });
const email = app.get(lib.EmailService);

// Look-alike mail: a few senders, recipients and subjects repeat; each body is its own.
const item = (i) => ({
  from: `shop${i % 2}@example.com`,
  to: Array.from({ length: 1 + (i % maxTo) }, (_, k) => `user${(i + k) % 5}@example.org`),
  subject: `Notice ${i % 4}`,
  text: `${tag}-${i}`,
});

process.stdout.write('ready\n');
if (env.START_ON_GO) await new Promise((r) => process.stdin.once('data', r));
if (env.START_AT) await new Promise((r) => setTimeout(r, Math.max(0, Number(env.START_AT) - Date.now())));
const tally = { sent: 0, notSent: 0, uncertain: 0, limited: 0, serviceLimited: 0, other: 0, recipients: 0 };
const started = Date.now();
if (env.MODE === 'sendMany') {
  const items = Array.from({ length: count }, (_, i) => item(i));
  for (const r of await email.sendMany(items)) {
    if (r.status === 'sent') {
      tally.sent++;
      tally.recipients += items[r.index].to.length;
    } else if (r.status === 'uncertain') tally.uncertain++;
    else tally.notSent++;
  }
} else {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const input = item(i);
      try {
        await email.send(input);
        tally.sent++;
        tally.recipients += input.to.length;
      } catch (err) {
        if (err instanceof lib.EmailRateLimitError) {
          if (err.budget) tally.limited++;
          else tally.serviceLimited++;
        } else tally.other++;
        if (err?.outcome === 'uncertain') tally.uncertain++;
        else tally.notSent++;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}
tally.ms = Date.now() - started;
process.stdout.write(JSON.stringify(tally) + '\n');
await app.close();
process.exit(0);

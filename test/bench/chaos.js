// Chaos run: 2,000 logical single sends at concurrency 32 through EmailService against an
// in-process EmailSandbox that injects faults into 20% of requests (every route, every kind:
// delays, 429, 500/502/503, resets before and after processing, failures after processing).
// Then every send's reported outcome is checked against what the sandbox really holds.
// The last line printed is a JSON object: { sends, faults, messages, duplicates, lost, uncertain, ... }.
// Usage: npm run chaos   (or: npm run build && node test/bench/chaos.js [sends] [concurrency] [seed])
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { EmailError, EmailModule, EmailSendUncertainError, EmailService } from '../../dist/index.js';
import { EmailSandbox } from '../../dist/testing/index.js';

const SENDS = Number(process.argv[2] ?? 2000);
const CONCURRENCY = Number(process.argv[3] ?? 32);
const SEED = Number(process.argv[4] ?? 20261122);
const PROBABILITY = 0.2;
const HARD_LIMIT_MS = 120_000;
const MODES = [
  'delay',
  'drop-before',
  'drop-after',
  'fail-after',
  { mode: 'status', status: 429, retryAfter: 1 },
  { mode: 'status', status: 500 },
  { mode: 'status', status: 502 },
  { mode: 'status', status: 503 },
];

const watchdog = setTimeout(() => {
  console.error(`chaos run exceeded ${HARD_LIMIT_MS / 1000} s`);
  process.exit(2);
}, HARD_LIMIT_MS);
watchdog.unref();

const sandbox = await EmailSandbox.start({ maxRequestLog: 10 });
const app = await NestFactory.createApplicationContext(
  EmailModule.forRoot({ apiKey: sandbox.apiKey, baseUrl: sandbox.baseUrl, logger: false, timeoutMs: 20_000 }),
  { logger: false },
);
const email = app.get(EmailService);
sandbox.faults.random({ probability: PROBABILITY, seed: SEED, modes: MODES });

const run = Date.now().toString(36);
const token = (i) => `[chaos ${run} #${i}]`;
const results = new Array(SENDS);
const started = Date.now();
let next = 0;

async function worker() {
  while (next < SENDS) {
    const i = next++;
    const input = {
      from: 'Chaos <chaos@example.com>',
      to: [`user${i}@example.com`],
      subject: `Receipt ${token(i)}`,
      text: `Logical send ${i}`,
    };
    try {
      const record = await email.send(input);
      results[i] = { kind: 'sent', id: record.id };
    } catch (err) {
      if (err instanceof EmailSendUncertainError) results[i] = { kind: 'uncertain', cause: err.cause?.name };
      else if (err instanceof EmailError) results[i] = { kind: err.outcome ?? 'uncertain', cause: err.name };
      else throw err;
    }
  }
}

await Promise.all(Array.from({ length: CONCURRENCY }, worker));
const elapsedMs = Date.now() - started;
sandbox.faults.clear();

const messages = sandbox.messages();
const byToken = new Map();
for (const m of messages) {
  const match = /#(\d+)\]$/.exec(m.subject);
  const i = match ? Number(match[1]) : -1;
  byToken.set(i, [...(byToken.get(i) ?? []), m.id]);
}

let duplicates = 0;
let lost = 0;
let uncertain = 0;
let uncertainButSent = 0;
let notSent = 0;
const causes = {};
for (let i = 0; i < SENDS; i++) {
  const held = byToken.get(i) ?? [];
  const r = results[i];
  if (held.length > 1) duplicates++;
  if (r.kind === 'sent' && !held.includes(r.id)) lost++;
  if (r.kind === 'not-sent') {
    notSent++;
    if (held.length > 0) lost++;
  }
  if (r.kind === 'uncertain') {
    uncertain++;
    if (held.length > 0) uncertainButSent++;
    causes[r.cause] = (causes[r.cause] ?? 0) + 1;
  }
}
const foreign = messages.filter((m) => !/#\d+\]$/.test(m.subject)).length;

const summary = {
  sends: SENDS,
  faults: sandbox.faults.injected,
  messages: messages.length,
  duplicates,
  lost,
  uncertain,
  uncertainButSent,
  notSent,
  foreign,
  concurrency: CONCURRENCY,
  seed: SEED,
  elapsedMs,
};

console.log(`chaos: ${SENDS} sends, concurrency ${CONCURRENCY}, ${PROBABILITY * 100}% faults (seed ${SEED})`);
console.log(`faults injected by mode: ${JSON.stringify(sandbox.faults.counts())}`);
console.log(
  `sent ${SENDS - uncertain - notSent}, not-sent ${notSent}, uncertain ${uncertain} ${JSON.stringify(causes)}`,
);
console.log(
  `uncertain sends the sandbox does hold: ${uncertainButSent}; in ${(elapsedMs / 1000).toFixed(1)} s`,
);
await app.close();
await sandbox.close();
console.log(JSON.stringify(summary));
process.exitCode = duplicates === 0 && lost === 0 ? 0 : 1;

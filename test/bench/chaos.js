// Chaos run: 2,000 logical single sends at concurrency 32 through two EmailService instances (which
// share nothing, as two processes would) against an in-process EmailSandbox that injects faults into
// 20% of requests (every route, every kind: delays, 429, 409, 500/502/503, resets before and after
// processing, failures after processing). The mail looks alike on purpose: two senders, five
// recipients, ten subjects over all sends, one in five a template send; only the body (or the template
// variable) is each send's own. Then every send's reported outcome is checked, by body, against what
// the sandbox really holds: `wrong_record` counts sends reported sent whose record is another's message.
// The last line printed is a JSON object: { sends, faults, messages, duplicates, lost, wrong_record, ... }.
// Usage: npm run chaos   (or: npm run build && node test/bench/chaos.js [sends] [concurrency] [seed])
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { EmailError, EmailModule, EmailSendUncertainError, EmailService } from '../../dist/index.js';
import { EmailSandbox, SAMPLE_TEMPLATE } from '../../dist/testing/index.js';

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
  { mode: 'status', status: 409 },
  { mode: 'status', status: 500 },
  { mode: 'status', status: 502 },
  { mode: 'status', status: 503 },
];

const watchdog = setTimeout(() => {
  console.error(`chaos run exceeded ${HARD_LIMIT_MS / 1000} s`);
  process.exit(2);
}, HARD_LIMIT_MS);
watchdog.unref();

// Template 2 renders the same subject for every send; only its variable is the send's own.
const LOGIN_TEMPLATE = {
  subject: 'Your login code',
  html: '<p>Your code: {{code}}</p>',
  text: 'Your code: {{code}}',
};
const sandbox = await EmailSandbox.start({
  maxRequestLog: 10,
  templates: { 1: SAMPLE_TEMPLATE, 2: LOGIN_TEMPLATE },
});
const boot = () =>
  NestFactory.createApplicationContext(
    EmailModule.forRoot({
      apiKey: sandbox.apiKey,
      baseUrl: sandbox.baseUrl,
      logger: false,
      timeoutMs: 20_000,
    }),
    { logger: false },
  );
const apps = [await boot(), await boot()];
const services = apps.map((app) => app.get(EmailService));
sandbox.faults.random({ probability: PROBABILITY, seed: SEED, modes: MODES });

const run = Date.now().toString(36);
const token = (i) => `[chaos ${run} #${i}]`;
const SUBJECTS = [
  'Your login code',
  'Your order has shipped',
  'Your order is confirmed',
  'Reset your password',
  'Your receipt',
  'Welcome aboard',
  'Your invoice',
  'Payment received',
  'Your subscription renews soon',
  'Action needed on your account',
];
/** Look-alike mail: the sender, recipients and subject repeat; the body (or template variable) is the send's own. */
function inputOf(i) {
  const from = i % 2 === 0 ? 'Chaos <chaos@example.com>' : 'noreply@example.com';
  const to = [`user${i % 5}@example.com`];
  if (i % 5 === 4) return { from, to, templateId: 2, variables: { code: token(i) } };
  return { from, to, subject: SUBJECTS[i % SUBJECTS.length], text: `Logical send ${i} ${token(i)}` };
}
const results = new Array(SENDS);
const started = Date.now();
let next = 0;

async function worker() {
  while (next < SENDS) {
    const i = next++;
    try {
      const record = await services[i % services.length].send(inputOf(i));
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
const tokenOf = new Map();
for (const m of messages) {
  const match = new RegExp(`\\[chaos ${run} #(\\d+)\\]`).exec(m.bodyText ?? '');
  const i = match ? Number(match[1]) : -1;
  byToken.set(i, [...(byToken.get(i) ?? []), m.id]);
  tokenOf.set(m.id, i);
}

let duplicates = 0;
let lost = 0;
let wrongRecord = 0;
let uncertain = 0;
let uncertainButSent = 0;
let notSent = 0;
const causes = {};
for (let i = 0; i < SENDS; i++) {
  const held = byToken.get(i) ?? [];
  const r = results[i];
  if (held.length > 1) duplicates++;
  if (r.kind === 'sent' && tokenOf.get(r.id) !== i) wrongRecord++;
  if (r.kind === 'sent' && held.length === 0) lost++;
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
const foreign = byToken.get(-1)?.length ?? 0;
const subjects = new Set(messages.map((m) => m.subject)).size;

const summary = {
  sends: SENDS,
  faults: sandbox.faults.injected,
  messages: messages.length,
  duplicates,
  lost,
  wrong_record: wrongRecord,
  uncertain,
  uncertainButSent,
  notSent,
  foreign,
  subjects,
  instances: services.length,
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
for (const app of apps) await app.close();
await sandbox.close();
console.log(JSON.stringify(summary));
const broken = Object.entries({ duplicates, lost, wrong_record: wrongRecord }).filter(([, n]) => n !== 0);
if (broken.length > 0) {
  console.error(`chaos: FAILED: ${broken.map(([name, n]) => `${name} ${n}`).join(', ')} (each must be 0)`);
  process.exitCode = 1;
}

// Outbox chaos run: 2,000 emails enqueued by EmailOutbox inside the app's own PostgreSQL transactions, by 2
// producer processes (1 to 3 emails per transaction, with `send` for one and `sendMany` for several; each
// transaction also inserts their order rows; about 20% of the transactions are rolled back on purpose), sent by 3 worker processes on one private PostgreSQL, against an in-process EmailSandbox that
// injects faults into 20% of requests (delays, 429, 500/502/503, resets before and after processing,
// failures after processing), while one worker process after another is killed with SIGKILL and restarted.
// The mail looks alike, as in the queue's chaos run: ten subjects (one a saved template's), five recipients,
// one sender; each email has a body of its own, except pairs of jobs enqueued with identical inputs (two
// jobs, two emails). Every outcome is checked BY BODY against what the sandbox holds, and every record a job
// reports is fetched (GET /emails/{id}) to check that it carries the job's own body. The last line is JSON:
//   { committed, rolled_back, messages, duplicates, lost, wrong_record, ghost, kills, cancelled, ... }
//   required: duplicates 0, lost 0, wrong_record 0, ghost 0 (an email for a rolled-back transaction), kills >= 3,
//   cancel_broken 0 (one committed job in ten is cancelled at a random moment while the workers run: a cancel
//   answered { cancelled: true } must leave the job `cancelled` and its email unsent)
// Usage: npm run chaos:outbox [emails] [seed] [--failover[=sync|async]] [--pgbouncer[=transaction|session]]
//   (a private PostgreSQL, or DATABASE_URL). Where production PostgreSQL runs:
//   --failover: a primary with a streaming standby behind HAProxy (the one address every process is given),
//     replicating synchronously (or =async); the primary is crashed (SIGKILL) and its standby promoted twice
//     mid-run (at 30% and 65% of the commits; the crashed node rejoins as a standby in between). Producers retry
//     a transaction that failed, as an app does (the same order and job ids). Also reported: failovers (>= 1
//     required) and, with =async, lost_with_failover (orders acknowledged, then gone with the failover: their
//     jobs must be gone too, never emailed); with =sync an order gone counts as lost.
//   --pgbouncer: every process behind PgBouncer in transaction mode (=session for session mode), the workers
//     listening straight to PostgreSQL (listenConnection).
import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { NestFactory } from '@nestjs/core';
import pg from 'pg';
import { EmailModule, EmailService } from '../../dist/index.js';
import { EmailOutbox, EmailOutboxModule } from '../../dist/outbox/index.js';
import { EmailSandbox } from '../../dist/testing/index.js';
import { startPgBouncer } from '../support/pgbouncer-server.mjs';
import { startFailoverTopology } from '../support/postgres-failover.mjs';
import { startPostgres } from '../support/postgres-server.mjs';
import { bodyOf, FAULT_MODES, inputOf, TEMPLATE_ID } from './chaos-mail.js';

const SELF = fileURLToPath(import.meta.url);

/** A transaction whose first email is `i` is rolled back on purpose (about 20% of them). */
const rolledBack = (i) => i % 5 === 2;

function outboxModule(env, extra) {
  return EmailOutboxModule.forRoot({
    connection: env.DATABASE_URL,
    schema: env.OUTBOX_SCHEMA,
    pollingIntervalMs: 500,
    maintenanceIntervalMs: 1000,
    attemptTimeoutMs: 8000,
    attempts: 12,
    backoff: { delayMs: 1000, maxDelayMs: 4000 },
    ...(env.OUTBOX_POOLER ? { pooler: env.OUTBOX_POOLER } : {}),
    ...extra,
  });
}

// ---- a producer process: `node outbox-chaos.js --producer <from> <to>`, env as the parent gives it ----
if (process.argv[2] === '--producer') {
  const [from, to] = process.argv.slice(3).map(Number);
  const env = process.env;
  const app = await NestFactory.createApplicationContext(
    {
      module: class ChaosProducer {},
      imports: [
        EmailModule.forRoot({ apiKey: env.EMAIL_API_KEY, baseUrl: env.EMAIL_BASE_URL, logger: false }),
        outboxModule(env, { worker: false }),
      ],
    },
    { logger: false },
  );
  const outbox = app.get(EmailOutbox);
  const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: 8 });
  pool.on('error', () => undefined); // an idle client cut by a failover
  let next = from;
  /**
   * One transaction: the orders of `ids` and their emails, one `send` for one, one `sendMany` for several. In a
   * failover run a transaction that failed is written again, as an app does: the same orders (kept once by their
   * ref) and job ids (one email each, even when the failed attempt did commit).
   */
  const write = async (ids) => {
    for (let attempt = 1; ; attempt++) {
      const error = await writeOnce(ids);
      if (error === undefined) return;
      if (env.CHAOS_RETRY !== '1' || attempt >= 40) {
        for (const i of ids) process.stdout.write(`error ${i} ${error}\n`);
        return;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  const writeOnce = async (ids) => {
    let client;
    try {
      client = await pool.connect();
      client.on('error', () => undefined);
      await client.query('BEGIN');
      for (const i of ids)
        await client.query('INSERT INTO chaos_orders (ref) VALUES ($1) ON CONFLICT (ref) DO NOTHING', [
          `order-${i}`,
        ]);
      if (ids.length === 1)
        await outbox.send(inputOf(env.CHAOS_RUN, ids[0]), { tx: client, jobId: `chaos-${ids[0]}` });
      else
        await outbox.sendMany(
          ids.map((i) => ({ input: inputOf(env.CHAOS_RUN, i), options: { jobId: `chaos-${i}` } })),
          { tx: client },
        );
      const back = rolledBack(ids[0]);
      await client.query(back ? 'ROLLBACK' : 'COMMIT');
      for (const i of ids) process.stdout.write(`${back ? 'rolled_back' : 'committed'} ${i}\n`);
      return undefined;
    } catch (err) {
      await client?.query('ROLLBACK').catch(() => undefined);
      return String(err?.message).replace(/\n/g, ' ');
    } finally {
      client?.release(true);
    }
  };
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < to) {
        // 1, 2 or 3 emails per transaction, by the first one's number.
        const ids = [];
        for (const size = 1 + (next % 3); ids.length < size && next < to;) ids.push(next++);
        await write(ids);
      }
    }),
  );
  await pool.end();
  await app.close();
  process.exit(0);
}

// ---- the run ----
const flags = process.argv.slice(2).filter((a) => a.startsWith('--'));
const positional = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const flagOf = (name, values) => {
  const found = flags.find((f) => f === `--${name}` || f.startsWith(`--${name}=`));
  if (found === undefined) return undefined;
  const value = found.includes('=') ? found.slice(found.indexOf('=') + 1) : values[0];
  if (!values.includes(value)) throw new Error(`--${name}=${value}: one of ${values.join(', ')}`);
  return value;
};
const FAILOVER = flagOf('failover', ['sync', 'async']);
const POOLER = flagOf('pgbouncer', ['transaction', 'session']);
const unknown = flags.filter((f) => !/^--(failover|pgbouncer)(=|$)/.test(f));
if (unknown.length > 0)
  throw new Error(
    `unknown flag(s) ${unknown.join(', ')}: --failover[=sync|async], --pgbouncer[=transaction|session]`,
  );
const EMAILS = Number(positional[0] ?? 2000);
const SEED = Number(positional[1] ?? 20261123);
const WORKERS = 3;
const PRODUCERS = 2;
const HARD_LIMIT_MS = 600_000;
const KILL_EVERY_MS = 3000;
const WORKER_SCRIPT = fileURLToPath(new URL('../outbox/support/outbox-worker.child.mjs', import.meta.url));
const DIST = pathToFileURL(fileURLToPath(new URL('../../dist', import.meta.url))).href;

const children = new Set();
const watchdog = setTimeout(() => {
  console.error(`outbox chaos run exceeded ${HARD_LIMIT_MS / 1000} s`);
  for (const c of children) c.kill('SIGKILL');
  process.exit(2);
}, HARD_LIMIT_MS);
watchdog.unref();

// Where the processes connect: one PostgreSQL, a failover topology (HAProxy's address), or PgBouncer in front.
const topology = FAILOVER ? await startFailoverTopology({ synchronous: FAILOVER === 'sync' }) : undefined;
const postgres = topology ? undefined : await startPostgres();
const bouncer = POOLER ? await startPgBouncer(postgres.url, { poolSize: 20 }) : undefined;
const databaseUrl =
  topology?.url ?? (POOLER === 'session' ? bouncer.sessionUrl : bouncer?.transactionUrl) ?? postgres.url;
const stopServers = async () => {
  await bouncer?.stop();
  await topology?.stop();
  await postgres?.stop();
};
const sandbox = await EmailSandbox.start({
  maxRequestLog: 10,
  templates: { [TEMPLATE_ID]: { subject: 'Your sign-in link', text: 'Sign in, {{name}}: {{code}}' } },
});
const run = randomUUID().slice(0, 8);
const schema = `chaos_${run.replaceAll('-', '')}`;
const env = {
  ...process.env,
  DATABASE_URL: databaseUrl,
  ...(POOLER ? { OUTBOX_POOLER: POOLER, OUTBOX_LISTEN_URL: postgres.url } : {}),
  ...(FAILOVER ? { CHAOS_RETRY: '1' } : {}),
  EMAIL_BASE_URL: sandbox.baseUrl,
  EMAIL_API_KEY: sandbox.apiKey,
  OUTBOX_SCHEMA: schema,
  CHAOS_RUN: run,
  CONCURRENCY: '16',
  ATTEMPTS: '12',
  ATTEMPT_TIMEOUT_MS: '8000',
};
delete env.NODE_OPTIONS;
const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
pool.on('error', () => undefined); // an idle client cut off while PostgreSQL stops: nothing to do
await pool.query('CREATE TABLE IF NOT EXISTS chaos_orders (id serial PRIMARY KEY, ref text NOT NULL UNIQUE)');

// The checking app: status and records (no worker).
const checkApp = await NestFactory.createApplicationContext(
  {
    module: class ChaosCheck {},
    imports: [
      EmailModule.forRoot({ apiKey: sandbox.apiKey, baseUrl: sandbox.baseUrl, logger: false }),
      outboxModule(env, { worker: false }),
    ],
  },
  { logger: false },
);
const outbox = checkApp.get(EmailOutbox);
const cancelUnknown = new Set(); // cancels whose answer a failover cut: their effect is read from the job
const email = checkApp.get(EmailService);

function startWorker() {
  const child = spawn(process.execPath, [WORKER_SCRIPT, DIST, 'js'], {
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

const committed = new Set();
const rolled = new Set();
const cancelAnswers = new Map(); // index -> cancel's answer
const cancelling = [];
const producerErrors = [];
function startProducer(from, to) {
  const child = spawn(process.execPath, [SELF, '--producer', String(from), String(to)], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.add(child);
  createInterface({ input: child.stdout }).on('line', (line) => {
    const [what, i, ...rest] = line.split(' ');
    if (what === 'committed') {
      committed.add(Number(i));
      // Cancels racing the workers: one committed job in ten, at a random moment soon after its commit.
      if (Number(i) % 10 === 3)
        cancelling.push(
          new Promise((r) => setTimeout(r, Math.random() * 1500))
            .then(() => outbox.cancel(`chaos-${i}`))
            .then(
              (answer) => cancelAnswers.set(Number(i), answer),
              () => cancelUnknown.add(Number(i)),
            ),
        );
    } else if (what === 'rolled_back') rolled.add(Number(i));
    else if (what === 'error') producerErrors.push(`${i}: ${rest.join(' ')}`);
  });
  return new Promise((resolve) => child.once('exit', (code) => (children.delete(child), resolve(code))));
}

const started = Date.now();
sandbox.faults.random({ probability: 0.2, seed: SEED, modes: FAULT_MODES });
let workers = Array.from({ length: WORKERS }, startWorker);
const per = Math.ceil(EMAILS / PRODUCERS);
const producing = Promise.all(
  Array.from({ length: PRODUCERS }, (_, p) => startProducer(p * per, Math.min(EMAILS, (p + 1) * per))),
);

let kills = 0;
const killer = setInterval(() => {
  const victim = workers[kills % WORKERS];
  victim.kill('SIGKILL');
  kills += 1;
  workers = workers.map((w) => (w === victim ? startWorker() : w));
}, KILL_EVERY_MS);

// Failovers mid-run, at 30% and 65% of the commits; the crashed node rejoins as a standby in between.
const failing = (async () => {
  if (!topology) return;
  for (const share of [0.3, 0.65]) {
    while (committed.size + rolled.size < share * EMAILS) await new Promise((r) => setTimeout(r, 50));
    await topology.failover();
    if (share < 0.65) await topology.rejoin({ synchronous: FAILOVER === 'sync' });
  }
})();
await producing;
await failing;
await Promise.all(cancelling);
async function pending() {
  const { rows } = await pool.query(
    `SELECT count(*)::int AS n FROM ${schema}.job WHERE state IN ('created', 'retry', 'active')`,
  );
  return rows[0].n;
}
while ((await pending()) > 0 || kills < 3) await new Promise((r) => setTimeout(r, 500));
clearInterval(killer);
const elapsedMs = Date.now() - started;
sandbox.faults.random(null);

// Orders a failover took back (acknowledged, then gone from the new primary): with asynchronous replication their
// jobs must be gone with them (no status, no email); with synchronous replication none may be gone.
const present = new Set(
  (
    await pool.query('SELECT ref FROM chaos_orders WHERE ref = ANY ($1::text[])', [
      [...committed].map((i) => `order-${i}`),
    ])
  ).rows.map((r) => r.ref),
);
const gone = new Set([...committed].filter((i) => !present.has(`order-${i}`)));
let goneButKept = 0; // an order gone whose job is still there: one without the other
const held = new Map(); // body -> messages the sandbox holds with it
for (const m of sandbox.messages()) held.set(m.bodyText, (held.get(m.bodyText) ?? 0) + 1);
const groups = new Map(); // body -> { jobs, sent, uncertain, other } of committed jobs
const statuses = new Map();
let cancelled = 0;
let cancelBroken = 0; // a cancel answered true whose job is not cancelled (or false for one that is)
for (const i of committed) {
  const status = await outbox.status(`chaos-${i}`);
  if (gone.has(i)) {
    // its email, if any, is counted below: a body no kept job explains (or one more than its twin's)
    if (status !== null) goneButKept += 1;
    continue;
  }
  statuses.set(i, status);
  const body = bodyOf(run, i);
  const g = groups.get(body) ?? { sent: 0, uncertain: 0, other: 0 };
  const answer = cancelAnswers.get(i);
  if (answer?.cancelled === true) cancelled += 1;
  if (!cancelUnknown.has(i) && (answer?.cancelled === true) !== (status?.state === 'cancelled'))
    cancelBroken += 1;
  if (status?.state === 'cancelled') {
    groups.set(body, g); // its body must then have no email beyond its group's others
    continue;
  }
  if (status?.state === 'sent') g.sent += 1;
  else if (status?.state === 'failed' && status.error?.outcome === 'uncertain') g.uncertain += 1;
  else g.other += 1;
  groups.set(body, g);
}
let duplicates = 0;
let lost = FAILOVER === 'async' ? 0 : gone.size;
let uncertain = 0;
let failed = 0;
for (const [body, g] of groups) {
  const n = held.get(body) ?? 0;
  if (n > g.sent + g.uncertain) duplicates += n - (g.sent + g.uncertain);
  if (n < g.sent) lost += g.sent - n;
  lost += g.other;
  uncertain += g.uncertain;
  failed += g.uncertain + g.other;
}
// An email whose body belongs only to rolled-back transactions: a ghost. Any other unknown body: lost's twin.
let ghost = 0;
const rolledBodies = new Set([...rolled, ...gone].map((i) => bodyOf(run, i))); // an email without its row
for (const [body, n] of held) {
  if (groups.has(body)) continue;
  if (rolledBodies.has(body)) ghost += n;
  else lost += n;
}
ghost += goneButKept;
let rolledJobsFound = 0;
for (const i of rolled) if ((await outbox.status(`chaos-${i}`)) !== null) rolledJobsFound += 1;
ghost += rolledJobsFound;
// Every record a job reports must be its own message: fetched over HTTP, it carries the job's body.
let wrongRecord = 0;
const seen = new Set();
const sent = [...statuses].filter(([, s]) => s?.state === 'sent');
for (let k = 0; k < sent.length; k += 20) {
  await Promise.all(
    sent.slice(k, k + 20).map(async ([i, status]) => {
      const id = status.record?.id;
      if (id === undefined || seen.has(id)) return void (wrongRecord += 1);
      seen.add(id);
      const detail = await email.get(id);
      if (detail.bodyText !== bodyOf(run, i)) wrongRecord += 1;
    }),
  );
}

for (const c of workers) c.kill('SIGTERM');
await Promise.all(workers.map((c) => new Promise((r) => (c.exitCode !== null ? r() : c.once('exit', r)))));
await checkApp.close();
const faults = sandbox.faults.injected;
const messages = sandbox.messages().length;
await sandbox.close();
await pool.end();
await stopServers();

console.log(
  JSON.stringify({
    emails: EMAILS,
    committed: committed.size,
    rolled_back: rolled.size,
    producer_errors: producerErrors.length,
    messages,
    duplicates,
    lost,
    wrong_record: wrongRecord,
    ghost,
    cancelled,
    cancel_broken: cancelBroken,
    kills,
    faults,
    uncertain,
    failed,
    producers: PRODUCERS,
    workers: WORKERS,
    topology: FAILOVER ? `failover-${FAILOVER}` : POOLER ? `pgbouncer-${POOLER}` : 'direct',
    ...(FAILOVER ? { failovers: topology.failovers, lost_with_failover: gone.size } : {}),
    elapsed_s: Math.round(elapsedMs / 100) / 10,
  }),
);
if (producerErrors.length)
  console.error(`producer errors (first 5): ${producerErrors.slice(0, 5).join(' | ')}`);
const broken = [
  ...Object.entries({ duplicates, lost, wrong_record: wrongRecord, ghost, cancel_broken: cancelBroken })
    .filter(([, n]) => n !== 0)
    .map(([name, n]) => `${name} ${n} (must be 0)`),
  ...(kills >= 3 ? [] : [`kills ${kills} (at least 3 for a measurement)`]),
  ...(!FAILOVER || topology.failovers >= 1 ? [] : ['no failover happened mid-run']),
  ...(committed.size + rolled.size === EMAILS
    ? []
    : [
        `${committed.size} committed + ${rolled.size} rolled back of ${EMAILS} (some transactions never ended)`,
      ]),
];
if (broken.length > 0) console.error(`outbox chaos: FAILED: ${broken.join(', ')}`);
process.exit(broken.length === 0 ? 0 : 1);

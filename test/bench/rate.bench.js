// `npm run bench:rate`: the `rateLimit` option shared through Redis by three processes.
// 1. Three sending processes (test/delivery/support/rate-sender.child.mjs on dist/), 20,000 emails of 1 to 3
//    recipients in all, against one sandbox whose quota allows R recipients per second, every process with
//    `rateLimit: { recipients: { limit: R, intervalMs: 1000 }, redis }`. R is chosen so that the run takes
//    about a minute. Figures: rate_utilization (recipients accepted over the most the quota can accept in the
//    run's time: R per window, and a window opens at the start, so R x (elapsed s + 1)), rate_429 (429s the
//    sandbox's quota answered), duplicates (bodies held twice), lost (emails neither held nor reported).
// 2. 10,000 emails without a limit from one process: single sends (16 in flight) against sendMany (batches
//    of 100, one after the other): sendmany_vs_single is sendMany's throughput over single sends'.
// Prints one JSON line. Knobs (environment): BENCH_RATE_EMAILS (20,000), BENCH_RATE_R (650),
// BENCH_RATE_COMPARE (10,000).
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { EmailSandbox } from '../../dist/testing/index.js';
import { startRedis } from '../support/redis-server.mjs';
import { failLoudly, requireFigures } from './loud.js';

failLoudly('rate.bench');

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const EMAILS = Number(process.env.BENCH_RATE_EMAILS ?? 20_000);
const R = Number(process.env.BENCH_RATE_R ?? 650);
const COMPARE = Number(process.env.BENCH_RATE_COMPARE ?? 10_000);
const PROCESSES = 3;

/** Runs one sender on dist/ and resolves with its tally. */
function sender(env) {
  const script = join(ROOT, 'test/delivery/support/rate-sender.child.mjs');
  const child = spawn(process.execPath, [script, pathToFileURL(join(ROOT, 'dist')).href, 'js'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  return new Promise((resolve, reject) =>
    child.once('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (code !== 0 || !line) reject(new Error(`sender exited ${code}`));
      else resolve(JSON.parse(line));
    }),
  );
}

const redis = await startRedis();
const result = {};
try {
  // 1. Three processes, one budget.
  const sandbox = await EmailSandbox.start({
    quota: { recipients: R, windowMs: 1000 },
    maxMessages: EMAILS * 2,
    maxRequestLog: 10,
  });
  const startAt = Date.now() + 3_000;
  const per = Math.ceil(EMAILS / PROCESSES);
  const tallies = await Promise.all(
    Array.from({ length: PROCESSES }, (_, p) =>
      sender({
        EMAIL_BASE_URL: sandbox.baseUrl,
        EMAIL_API_KEY: sandbox.apiKey,
        COUNT: String(Math.min(per, EMAILS - p * per)),
        CONCURRENCY: '16',
        TAG: `p${p}`,
        START_AT: String(startAt),
        TIMEOUT_MS: '120000',
        RATE_LIMIT: JSON.stringify({ recipients: { limit: R, intervalMs: 1000 }, redis: redis.url }),
      }),
    ),
  );
  const elapsedS = Math.max(...tallies.map((t) => t.ms)) / 1000;
  const held = sandbox.messages();
  const bodies = new Map();
  let recipients = 0;
  for (const m of held) {
    bodies.set(m.bodyText, (bodies.get(m.bodyText) ?? 0) + 1);
    recipients += m.toAddresses.length;
  }
  const reported = tallies.reduce((n, t) => n + t.sent, 0);
  const failed = tallies.reduce((n, t) => n + t.notSent + t.uncertain, 0);
  const limited = sandbox.limited();
  Object.assign(result, {
    emails: EMAILS,
    processes: PROCESSES,
    r_recipients_per_s: R,
    elapsed_s: Number(elapsedS.toFixed(2)),
    recipients_accepted: recipients,
    rate_utilization: Number((recipients / ((elapsedS + 1) * R)).toFixed(3)),
    rate_429: limited.quota + limited.rate,
    duplicates: [...bodies.values()].filter((n) => n > 1).length,
    lost: EMAILS - bodies.size - failed,
    reported_sent: reported,
    not_sent_or_uncertain: failed,
  });
  await sandbox.close();

  // 2. sendMany against single sends, no limit.
  const compare = await EmailSandbox.start({ maxMessages: COMPARE * 2, maxRequestLog: 10 });
  const base = { EMAIL_BASE_URL: compare.baseUrl, EMAIL_API_KEY: compare.apiKey, COUNT: String(COMPARE) };
  const single = await sender({ ...base, MODE: 'send', CONCURRENCY: '16', TAG: 'single' });
  const many = await sender({ ...base, MODE: 'sendMany', TAG: 'many' });
  await compare.close();
  Object.assign(result, {
    single_emails_per_s: Math.round(single.sent / (single.ms / 1000)),
    sendmany_emails_per_s: Math.round(many.sent / (many.ms / 1000)),
    sendmany_vs_single: Number((single.ms / many.ms).toFixed(2)),
  });
} finally {
  await redis.stop();
}
const figures = ['rate_utilization', 'single_emails_per_s', 'sendmany_emails_per_s', 'sendmany_vs_single'];
requireFigures(result, figures, 'rate.bench');
if (result.reported_sent === 0 || result.single_emails_per_s === 0 || result.sendmany_emails_per_s === 0) {
  throw new Error(`rate.bench sent nothing in some part: ${JSON.stringify(result)}`);
}
process.stdout.write(JSON.stringify(result) + '\n');

// Turns the runs of `run.js` into the figures (ratios, targets) and the readable table.
import { round } from './load.js';

/** Each client: its file under clients/, its key in the JSON, its name in the table. */
export const CLIENTS = [
  { file: 'email-service', key: 'email_service', label: 'EmailService' },
  { file: 'undici', key: 'undici', label: 'undici Pool.request' },
  { file: 'fetch', key: 'fetch', label: 'global fetch' },
  { file: 'axios', key: 'axios', label: '@nestjs/axios' },
];

/** What the issue asks the figures to show (not a timed test). */
export const TARGETS = {
  send_vs_undici: ['>=', 0.9], // on a quiet machine (issue 37; 0.8 until then)
  send_vs_fetch: ['>=', 2],
  send_vs_axios: ['>=', 2],
  p99_vs_undici: ['<=', 1.5],
  rss_growth_mb: ['<', 30],
};

/**
 * The job layer's targets (issue 51), against anchors measured in the same run: a bare BullMQ worker, the bare
 * pg-boss batch worker given the outbox's index and statistics, and that worker's p99 beside the same flow.
 */
export const JOB_TARGETS = {
  queue_vs_bare_bullmq: ['>=', 0.9],
  outbox_vs_bare_pgboss_tuned: ['>=', 0.7],
  commit_to_sent_loaded_p99_vs_bare: ['<=', 1.5],
};

/** Adds the job layer's targets to `figures.targets_met`, once the queue's and the outbox's figures are in. */
export function addJobTargets(figures) {
  for (const [name, target] of Object.entries(JOB_TARGETS))
    figures.targets_met[name] = met(target, figures[name]);
}

/** Below this share of its CPU, a client process was held back by other processes on the machine. */
const BUSY_MACHINE_UTIL = 0.8;

const ratio = (a, b) => (a && b ? round(a / b, 2) : null);
const fmt = (value, digits = 2) => (typeof value === 'number' ? value.toFixed(digits) : 'MISSING');

function met([op, bound], value) {
  if (typeof value !== 'number') return false;
  return op === '>=' ? value >= bound : op === '<=' ? value <= bound : value < bound;
}

/** The better run (higher throughput) of each client and operation. */
function best(runs) {
  const results = {};
  for (const { key } of CLIENTS) {
    const pick = (op) => runs[key].map((run) => run[op]).reduce((a, b) => (b.rps > a.rps ? b : a));
    results[key] = { send: pick('send'), list: pick('list'), connections: runs[key][0].connections };
  }
  return results;
}

/** Every figure of a run of the benchmark, the headline ratios first. */
export function summarize(runs, rss, validation) {
  const results = best(runs);
  const svc = results.email_service;
  const { undici, fetch, axios } = results;
  // Throughput that the client's own CPU time allows (1 / CPU per request), relative: the same
  // comparison as the req/s one, but steadier when other processes compete for the client's CPU.
  const cpuRatio = (a, b) => ratio(b.cpu_us_per_req, a.cpu_us_per_req);
  const figures = {
    send_vs_undici: ratio(svc.send.rps, undici.send.rps),
    send_vs_fetch: ratio(svc.send.rps, fetch.send.rps),
    send_vs_axios: ratio(svc.send.rps, axios.send.rps),
    p99_vs_undici: ratio(svc.send.p99_ms, undici.send.p99_ms),
    rss_growth_mb: rss.rss_growth_mb,
    validate_vs_stringify: validation.validate_vs_stringify ?? null,
    list_vs_undici: ratio(svc.list.rps, undici.list.rps),
    list_p99_vs_undici: ratio(svc.list.p99_ms, undici.list.p99_ms),
    cpu_send_vs_undici: cpuRatio(svc.send, undici.send),
    cpu_send_vs_fetch: cpuRatio(svc.send, fetch.send),
    cpu_send_vs_axios: cpuRatio(svc.send, axios.send),
    cpu_list_vs_undici: cpuRatio(svc.list, undici.list),
  };
  figures.targets_met = Object.fromEntries(
    Object.entries(TARGETS).map(([name, target]) => [name, met(target, figures[name])]),
  );
  const utils = Object.values(results).flatMap((r) => [r.send.cpu_util, r.list.cpu_util]);
  figures.busy_machine = Math.min(...utils) < BUSY_MACHINE_UTIL;
  return { figures, results };
}

/** Keys of `figures` that are verdicts, not measurements. */
const VERDICTS = new Set(['targets_met', 'busy_machine']);

/**
 * Every figure that is not a finite number, with the reason: the one given for it (the error of the
 * script that measures it), else what it is computed from.
 */
export function missingFigures(figures, reasons) {
  const missing = {};
  for (const [name, value] of Object.entries(figures)) {
    if (VERDICTS.has(name) || (typeof value === 'number' && Number.isFinite(value))) continue;
    missing[name] =
      reasons[name] ??
      `not computed: its inputs were ${JSON.stringify(value)} (a client's run gave no rps, p99 or CPU time)`;
  }
  return missing;
}

/** The table printed before the JSON line, as Markdown (it goes into docs/performance.md as is). */
export function table({ figures, results, missing = {} }) {
  const widths = [19, 4, 6, 6, 7, 7, 9, 6, 6];
  const row = (cells) => `| ${cells.map((c, i) => String(c).padEnd(widths[i])).join(' | ')} |`;
  const lines = [
    row(['client', 'op', 'req/s', 'p50 ms', 'p99 ms', 'CPU us', 'vs undici', 'CPU', 'server']),
    row(widths.map((w) => '-'.repeat(w))),
  ];
  for (const op of ['send', 'list']) {
    for (const { key, label } of CLIENTS) {
      const r = results[key][op];
      const vs = ratio(r.rps, results.undici[op].rps);
      const cells = [label, op, r.rps, fmt(r.p50_ms), fmt(r.p99_ms), fmt(r.cpu_us_per_req, 1)];
      lines.push(row([...cells, `${fmt(vs)}x`, fmt(r.cpu_util), fmt(r.server_cpu_util)]));
    }
  }
  lines.push('');
  for (const [name, [op, bound]] of Object.entries({ ...TARGETS, ...JOB_TARGETS })) {
    const verdict = name in missing ? 'MISSING' : figures.targets_met[name] ? 'met' : 'MISSED';
    lines.push(`${`${name} ${op} ${bound}`.padEnd(24)} ${String(figures[name]).padEnd(6)} ${verdict}`);
  }
  for (const name of [
    'validate_vs_stringify',
    'outbox_jobs_per_s',
    'outbox_vs_bare_pgboss',
    'commit_to_sent_p50_ms',
    'commit_to_sent_p99_ms',
    'commit_to_sent_loaded_p50_ms',
    'commit_to_sent_loaded_p99_ms',
  ]) {
    if (!(name in missing)) lines.push(`${name.padEnd(24)} ${figures[name]}`);
  }
  for (const [name, why] of Object.entries(missing)) lines.push(`MISSING ${name}: ${why}`);
  lines.push(
    `by CPU time per request: send ${figures.cpu_send_vs_undici}x undici, ${figures.cpu_send_vs_fetch}x fetch, ` +
      `${figures.cpu_send_vs_axios}x axios; list ${figures.cpu_list_vs_undici}x undici`,
  );
  if (figures.busy_machine) {
    lines.push(
      `note: a client process got less than ${BUSY_MACHINE_UTIL * 100}% of its CPU (column CPU): other ` +
        'processes were busy, so req/s and p99 are noisy; the CPU-time ratios above are steadier.',
    );
  }
  return lines.join('\n');
}

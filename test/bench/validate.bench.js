// Cost of checking the largest legal batch (100 emails x 50 recipients, ~10 KB of html each) the way a
// batch send checks it today (lib/validation: one snapshotInput of the items, then every rule of each
// item, validateBatchItems), against one JSON.stringify of the same batch, which the send does anyway.
// `validate_vs_stringify` is snapshot + rules over the stringify; `rules_vs_stringify` the rules alone.
// Target: the check costs at most 2x the stringify. Prints figures, then one JSON line; exits 1 when it
// cannot measure (dist/ missing, the internal modules moved, the batch not valid).
// Usage: npm run build && node test/bench/validate.bench.js
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { failLoudly, requireFigures } from './loud.js';

failLoudly('validate.bench');
// Internal modules of the build: validation left the public surface, and this measures the code sends run.
const dist = (path) => new URL(`../../dist/${path}`, import.meta.url);
for (const path of ['validation/batch.rules.js', 'validation/input-snapshot.helpers.js']) {
  if (!existsSync(fileURLToPath(dist(path)))) {
    throw new Error(`dist/${path} is missing: run \`npm run build\` first (or the module moved)`);
  }
}
const { validateBatchItems } = await import(dist('validation/batch.rules.js').href);
const { snapshotInput } = await import(dist('validation/input-snapshot.helpers.js').href);
const { MAX_BATCH_ITEMS, MAX_RECIPIENTS } = await import(dist('validation/validation.constants.js').href);
for (const [name, fn] of Object.entries({ validateBatchItems, snapshotInput })) {
  if (typeof fn !== 'function') throw new Error(`${name} is not exported by dist/validation any more`);
}

const ROUNDS = 15;
const PER_ROUND = 20;

function html(item) {
  const rows = [];
  for (let line = 0; rows.join('').length < 10_000; line++) {
    rows.push(
      `<tr class="row-${line % 2 ? 'odd' : 'even'}"><td style="padding:4px 8px;color:#333">Item ${item}.${line}</td>` +
        `<td align="right">&euro; ${(line * 7.5).toFixed(2)}</td><td><a href="https://shop.example.com/o/${item}/${line}?utm_source=mail">view</a></td></tr>\n`,
    );
  }
  return `<!doctype html><html><body><h1>Your order #${item}</h1><table width="100%">\n${rows.join('')}</table></body></html>`;
}

function recipient(item, n) {
  return n % 3 === 0
    ? `Customer ${item}-${n} <customer.${item}.${n}@customers.example.org>`
    : n % 3 === 1
      ? `"Doe, Jane ${n}" <jane+${item}-${n}@mail.example.co.uk>`
      : `user${item}_${n}@example.com`;
}

const batch = Array.from({ length: MAX_BATCH_ITEMS }, (_, item) => ({
  from: 'Example Shop <orders@shop.example.com>',
  to: Array.from({ length: MAX_RECIPIENTS }, (_, n) => recipient(item, n)),
  subject: `Your order #${item} has shipped`,
  html: html(item),
  trackOpens: true,
  trackClicks: false,
}));

/** What `checkBatch` does before it serializes: one snapshot, then every rule; the issues found. */
function check(items) {
  const snap = snapshotInput(items);
  return snap.issues.length > 0 ? snap.issues : validateBatchItems(snap.value);
}

const issues = check(batch);
if (issues.length > 0) {
  throw new Error(`the benchmark batch is not valid: ${JSON.stringify(issues.slice(0, 3))}`);
}
const bytes = Buffer.byteLength(JSON.stringify(batch));
const snapshot = snapshotInput(batch).value;

let sink = 0;
function timePerOp(fn) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < PER_ROUND; i++) sink += fn();
  return Number(process.hrtime.bigint() - start) / 1e6 / PER_ROUND;
}
const validate = () => check(batch).length;
const rules = () => validateBatchItems(snapshot).length;
const stringify = () => JSON.stringify(snapshot).length;

// warm-up
for (let i = 0; i < 10; i++) {
  timePerOp(validate);
  timePerOp(rules);
  timePerOp(stringify);
}

const v = [];
const r = [];
const s = [];
for (let round = 0; round < ROUNDS; round++) {
  v.push(timePerOp(validate));
  r.push(timePerOp(rules));
  s.push(timePerOp(stringify));
}
const median = (xs) => xs.slice().sort((a, b) => a - b)[xs.length >> 1];
const validateMs = median(v);
const rulesMs = median(r);
const stringifyMs = median(s);
const ratio = validateMs / stringifyMs;

console.log(
  `batch: ${MAX_BATCH_ITEMS} emails x ${MAX_RECIPIENTS} recipients, ${(bytes / 1024).toFixed(0)} KiB as JSON`,
);
console.log(`snapshot + rules:   ${validateMs.toFixed(3)} ms (median of ${ROUNDS} rounds x ${PER_ROUND})`);
console.log(`rules alone:        ${rulesMs.toFixed(3)} ms`);
console.log(`JSON.stringify:     ${stringifyMs.toFixed(3)} ms`);
console.log(
  `ratio: ${ratio.toFixed(3)} (target <= 2.0) ${ratio <= 2 ? 'OK' : 'OVER TARGET'}   [sink ${sink % 10}]`,
);
console.log(
  JSON.stringify(
    requireFigures(
      {
        validate_ms: +validateMs.toFixed(4),
        rules_ms: +rulesMs.toFixed(4),
        stringify_ms: +stringifyMs.toFixed(4),
        validate_vs_stringify: +ratio.toFixed(4),
        rules_vs_stringify: +(rulesMs / stringifyMs).toFixed(4),
        measured: 'snapshotInput + validateBatchItems (dist/validation) against JSON.stringify',
      },
      ['validate_ms', 'stringify_ms', 'validate_vs_stringify'],
      'validate.bench',
    ),
  ),
);

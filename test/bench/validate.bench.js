// Cost of validating the largest legal batch (100 emails x 50 recipients, ~10 KB of html each) with
// validateBatchItems, against one JSON.stringify of the same batch (which the send does anyway).
// Target: validation costs at most 2x the stringify. Prints figures, then one JSON line.
// Usage: npm run build && node test/bench/validate.bench.js
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const DTO = new URL('../../dist/index.js', import.meta.url);
if (!existsSync(fileURLToPath(DTO))) {
  console.error('dist/index.js is missing: run `npm run build` first');
  process.exit(1);
}
const { validateBatchItems, MAX_BATCH_ITEMS, MAX_RECIPIENTS } = await import(DTO.href);

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

const issues = validateBatchItems(batch);
if (issues.length > 0) {
  console.error('the benchmark batch is not valid:', issues.slice(0, 3));
  process.exit(1);
}
const bytes = Buffer.byteLength(JSON.stringify(batch));

let sink = 0;
function timePerOp(fn) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < PER_ROUND; i++) sink += fn();
  return Number(process.hrtime.bigint() - start) / 1e6 / PER_ROUND;
}
const validate = () => validateBatchItems(batch).length;
const stringify = () => JSON.stringify(batch).length;

// warm-up
for (let i = 0; i < 10; i++) {
  timePerOp(validate);
  timePerOp(stringify);
}

const v = [];
const s = [];
for (let r = 0; r < ROUNDS; r++) {
  v.push(timePerOp(validate));
  s.push(timePerOp(stringify));
}
const median = (xs) => xs.slice().sort((a, b) => a - b)[xs.length >> 1];
const validateMs = median(v);
const stringifyMs = median(s);
const ratio = validateMs / stringifyMs;

console.log(
  `batch: ${MAX_BATCH_ITEMS} emails x ${MAX_RECIPIENTS} recipients, ${(bytes / 1024).toFixed(0)} KiB as JSON`,
);
console.log(`validateBatchItems: ${validateMs.toFixed(3)} ms (median of ${ROUNDS} rounds x ${PER_ROUND})`);
console.log(`JSON.stringify:     ${stringifyMs.toFixed(3)} ms`);
console.log(
  `ratio: ${ratio.toFixed(3)} (target <= 2.0) ${ratio <= 2 ? 'OK' : 'OVER TARGET'}   [sink ${sink % 10}]`,
);
console.log(
  JSON.stringify({
    validate_ms: +validateMs.toFixed(4),
    stringify_ms: +stringifyMs.toFixed(4),
    validate_vs_stringify: +ratio.toFixed(4),
  }),
);

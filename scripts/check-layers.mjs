#!/usr/bin/env node
// Checks the import graph of lib/ against the layer table below. Run by `npm run lint`.
//
// Fails when a folder imports a folder in the same or a higher layer (which also rules out any
// import cycle between folders), when a folder is missing from the table, or when lib/testing (the
// sandbox, an emulator that must share no code with the client it checks) imports anything outside itself.
//
// A NEW FOLDER UNDER lib/ MUST BE ADDED TO LAYERS: pick the lowest layer above everything it imports.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Folder of lib/ -> layer. A folder may import only folders in a strictly lower layer. '.' is lib/ itself. */
export const LAYERS = {
  interfaces: 0, // plain types: inputs, records, options, call options
  errors: 1, // the error classes users catch
  records: 2, // parsing of service responses into typed records
  dto: 2, // class-validator DTOs, the fast validator, field rules
  config: 2, // option resolution, constants, env parsing, emailConfig, optional peers
  telemetry: 2, // (issue 16) spans and metrics, trace-context helpers
  templates: 2, // (issue 16) typed saved-template declarations
  http: 3, // undici transport, API client, response -> error mapping
  delivery: 4, // retry policy and loop, idempotency keys, reconciliation
  service: 5, // EmailService
  jobs: 6, // (issue 24) the one job-attempt routine shared by the queue and the outbox
  queue: 8, // (issue 14) BullMQ entry point; above decorators/ for the named-instance tokens
  outbox: 8, // (issue 24) pg-boss outbox entry point; beside queue/, never importing it
  health: 6, // Terminus health indicator
  interceptors: 6, // error -> HTTP exception mapping
  decorators: 7, // named-instance tokens and @InjectEmailService
  '.': 8, // EmailModule, providers, the package entry point
  kit: 9, // (issue 27) EmailTestingModule: EmailModule on a sandbox mailbox; the ./testing entry point
};

/** Folders that form a closed island: they may import nothing from lib/ outside themselves. */
export const ISLANDS = ['testing'];

/** The only folders allowed to import an island (it still imports nothing back). */
export const ISLAND_USERS = { testing: ['kit'] };

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'lib');

function* sources(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* sources(path);
    else if (/\.ts$/.test(name) && !name.endsWith('.d.ts')) yield path;
  }
}

const folderOf = (file) => {
  const rel = relative(root, file).split(sep);
  return rel.length === 1 ? '.' : rel[0];
};

const specifiers = (text) => {
  const found = [];
  const re =
    /(?:import|export)\s[^'";]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|^import\s*['"]([^'"]+)['"]/gm;
  for (const m of text.matchAll(re)) found.push(m[1] ?? m[2] ?? m[3]);
  return found.filter((s) => s.startsWith('.'));
};

const problems = [];
const edges = new Map();
for (const file of sources(root)) {
  const from = folderOf(file);
  if (!(from in LAYERS) && !ISLANDS.includes(from)) {
    problems.push(`lib/${from}/ is not in the LAYERS table of scripts/check-layers.mjs: add it there`);
    continue;
  }
  for (const spec of specifiers(readFileSync(file, 'utf8'))) {
    const target = resolve(dirname(file), spec);
    const where = relative(root, file);
    if (target !== root && !target.startsWith(root + sep)) {
      problems.push(`lib/${where} imports ${spec}, outside lib/`);
      continue;
    }
    const to = folderOf(target);
    if (to === from) continue;
    edges.set(`${from} -> ${to}`, where);
    if (ISLANDS.includes(to) && ISLAND_USERS[to]?.includes(from)) {
      continue;
    } else if (ISLANDS.includes(from) || ISLANDS.includes(to)) {
      problems.push(
        `lib/${where} imports ${spec}: lib/${ISLANDS.includes(from) ? from : to}/ shares no code with the rest of lib/`,
      );
    } else if (!(to in LAYERS)) {
      problems.push(`lib/${to}/ is not in the LAYERS table of scripts/check-layers.mjs: add it there`);
    } else if (LAYERS[to] >= LAYERS[from]) {
      problems.push(
        `lib/${where} (layer ${LAYERS[from]} ${from}) imports ${spec} (layer ${LAYERS[to]} ${to}): a folder imports only lower layers`,
      );
    }
  }
}

// Cycles between folders are impossible when the rule above holds; report them by name anyway.
for (const edge of edges.keys()) {
  const [a, b] = edge.split(' -> ');
  if (a < b && edges.has(`${b} -> ${a}`)) problems.push(`import cycle between lib/${a}/ and lib/${b}/`);
}

if (problems.length > 0) {
  console.error(`check-layers: ${problems.length} problem(s)\n  ` + [...new Set(problems)].join('\n  '));
  process.exit(1);
}
console.log(`check-layers: ${edges.size} folder imports, all downward`);

#!/usr/bin/env node
// Checks lib/ against the layer table and the role vocabulary below. Run by `npm run lint`.
//
// Fails when a folder imports a folder in the same or a higher layer (which also rules out any
// import cycle between folders), when a folder is missing from the table, when lib/testing (the
// sandbox, an emulator that must share no code with the client it checks) imports anything outside
// itself, or when a file's name is not `<topic>.<role>.ts` with a role of ROLES.
//
// A NEW FOLDER UNDER lib/ MUST BE ADDED TO LAYERS: pick the lowest layer above everything it imports.
//
//   node scripts/check-layers.mjs               checks lib/
//   node scripts/check-layers.mjs --root <dir>  checks another tree laid out like lib/
//   node scripts/check-layers.mjs --self-test   shows on a fixture that an upward import and an unknown role fail
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Folder of lib/ -> layer. A folder may import only folders in a strictly lower layer. '.' is lib/ itself. */
export const LAYERS = {
  interfaces: 0, // plain types: inputs, records, options, call options, the OpenTelemetry API's shape
  policy: 1, // THE decision table: retries, outcomes, a job's next step
  time: 1, // the Clock every wait uses, withTimeout
  lists: 1, // the linked list whose items carry their own links (deadlines, open sends)
  errors: 2, // every error class
  peers: 3, // optional peers, loaded in one place, one way
  records: 4, // parsing of service responses into typed records
  telemetry: 4, // the delivery observer (logging, spans and metrics)
  config: 4, // options, constants, env parsing, emailConfig
  validation: 4, // input rules and DTOs with their OpenAPI metadata, grouped by concept; one <kind>.rules.ts per input kind
  templates: 5, // typed saved-template declarations and the public builders (which use validation/)
  suppression: 5, // the suppression list: its gate, its local copy, its stores (memory, Redis, PostgreSQL), EmailSuppressions
  http: 6, // undici transport, API client, response -> error
  delivery: 7, // the request loop, claimed records, identical sends, rate limiter
  service: 8, // EmailService, sendMany
  health: 9, // Terminus health indicator
  interceptors: 9, // error -> HTTP exception
  '.': 10, // EmailModule (module-definition + module), the package entry point
  jobs: 11, // the one job-attempt routine shared by the queue and the outbox
  queue: 12, // BullMQ entry point
  outbox: 12, // pg-boss outbox entry point
  kit: 13, // EmailTestingModule: EmailModule on a sandbox mailbox; the ./testing entry point
};

/** Folders that form a closed island: they may import nothing from lib/ outside themselves. */
export const ISLANDS = ['testing'];

/** The only folders allowed to import an island (it still imports nothing back). */
export const ISLAND_USERS = { testing: ['kit'] };

/** File roles: a file outside the island is `<topic>.<role>.ts` (or a `.cjs.ts` stand-in), or `index.ts`. */
export const ROLES = [
  'module', // a Nest module
  'module-definition', // a module's base class from ConfigurableModuleBuilder
  'service', // an injectable service users call
  'options', // option types, their checking and defaults
  'interface', // types only
  'constants', // constants and user-facing texts
  'error', // error classes
  'dto', // DTO classes (inputs, OpenAPI responses)
  'rules', // checks values; one `<input-kind>.rules.ts` validates a whole input
  'policy', // decides (retries, outcomes, waits)
  'client', // HTTP: transport, API client, body reader
  'engine', // runs work: the request loop, the job-attempt routine, sendMany
  'store', // state held across calls
  'parser', // untrusted text or JSON to typed values
  'loader', // optional peers
  'health', // a Terminus health indicator
  'interceptor', // a Nest interceptor
  'decorator', // a decorator
  'helpers', // small functions: public builders, internal pure helpers
  'telemetry', // the delivery observer: logging, spans, metrics, trace context
  'backend', // an engine adapter behind the job layer (BullMQ, pg-boss)
  'worker', // a job engine's worker, as a class of its own
  'listener', // a connection that waits for the database's notifications (LISTEN) and wakes a worker
  'cli', // a command of the package (`bin`): reads its arguments, prints, sets the exit code
];

/** In the island (lib/testing/): its own names, and anything in the sandbox page's folder. */
const ISLAND_FILE = /^(sandbox(?:\.[a-z0-9-]+){1,2}|sandbox-[a-z0-9-]+\.handler|email-sandbox|index)\.ts$/;
const ISLAND_FOLDERS = ['testing/page'];

function* sources(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* sources(path);
    else if (/\.ts$/.test(name) && !name.endsWith('.d.ts')) yield path;
  }
}

const folderOf = (root, file) => {
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

/** Why `file`'s name breaks the vocabulary, or undefined. */
function roleOf(root, file) {
  const rel = relative(root, file).split(sep).join('/');
  const name = rel.split('/').pop();
  if (ISLANDS.some((island) => rel.startsWith(`${island}/`))) {
    if (ISLAND_FOLDERS.some((folder) => rel.startsWith(`${folder}/`)) || ISLAND_FILE.test(name))
      return undefined;
    return `lib/${rel}: a sandbox file is named sandbox.<topic>.ts or sandbox-<topic>.handler.ts`;
  }
  if (name === 'index.ts') return undefined;
  const role = /^[a-z0-9-]+\.([a-z-]+)(?:\.cjs)?\.ts$/.exec(name)?.[1];
  if (role !== undefined && ROLES.includes(role)) return undefined;
  return `lib/${rel}: not <topic>.<role>.ts with a role of ROLES in scripts/check-layers.mjs (${ROLES.join(', ')})`;
}

/** The problems of the tree at `root` (a folder laid out like lib/). */
export function checkLayers(root) {
  const problems = [];
  const edges = new Map();
  for (const file of sources(root)) {
    const from = folderOf(root, file);
    if (!(from in LAYERS) && !ISLANDS.includes(from)) {
      problems.push(`lib/${from}/ is not in the LAYERS table of scripts/check-layers.mjs: add it there`);
      continue;
    }
    const roleProblem = roleOf(root, file);
    if (roleProblem) problems.push(roleProblem);
    for (const spec of specifiers(readFileSync(file, 'utf8'))) {
      const target = resolve(dirname(file), spec);
      const where = relative(root, file);
      if (target !== root && !target.startsWith(root + sep)) {
        problems.push(`lib/${where} imports ${spec}, outside lib/`);
        continue;
      }
      const to = folderOf(root, target);
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
  return { problems: [...new Set(problems)], edges: edges.size };
}

/** Runs the check on a fixture with one upward import and one unknown role: both must be reported. */
function selfTest() {
  const dir = mkdtempSync(join(tmpdir(), 'check-layers-'));
  try {
    const write = (path, text) => {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    };
    write('interfaces/thing.interface.ts', "import { x } from '../service/thing.service.js';\n");
    write('service/thing.service.ts', 'export const x = 1;\n');
    write('service/thing.widget.ts', 'export const y = 2;\n');
    write('testing/sandbox.thing.ts', 'export const z = 3;\n');
    const { problems } = checkLayers(dir);
    const expected = [
      /interfaces\/thing\.interface\.ts \(layer 0 interfaces\) imports/,
      /service\/thing\.widget\.ts: not <topic>\.<role>\.ts/,
    ];
    const missed = expected.filter((re) => !problems.some((p) => re.test(p)));
    if (missed.length > 0 || problems.length !== expected.length) {
      console.error(`check-layers --self-test failed; problems found:\n  ${problems.join('\n  ')}`);
      process.exit(1);
    }
    console.log(`check-layers --self-test: the fixture's upward import and unknown role are refused`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const args = process.argv.slice(2);
if (args.includes('--self-test')) {
  selfTest();
  process.exit(0);
}
const rootArg = args.indexOf('--root');
const root =
  rootArg >= 0 ? resolve(args[rootArg + 1]) : resolve(dirname(fileURLToPath(import.meta.url)), '..', 'lib');
const { problems, edges } = checkLayers(root);
if (problems.length > 0) {
  console.error(`check-layers: ${problems.length} problem(s)\n  ` + problems.join('\n  '));
  process.exit(1);
}
console.log(`check-layers: ${edges} folder imports, all downward; every file named by a role`);

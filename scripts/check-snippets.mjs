#!/usr/bin/env node
// Snippet check: every ```ts block of README.md and docs/**/*.md is written to a file and type-checked, all in
// one `tsc --noEmit` run, against the package's own sources (`nestjs-transactional-email`, `/testing` and
// `/queue` mapped to lib/ by `paths`). A block whose info string is `ts partial` is skipped.
// Usage: node scripts/check-snippets.mjs [markdown files or dirs...]   (default: README.md docs/)
// Prints `file.md:line: error TS...` for each problem and exits 1.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const inputs = args.length > 0 ? args.map((a) => resolve(a)) : [join(repo, 'README.md'), join(repo, 'docs')];

function collect(path, out) {
  if (!existsSync(path)) return out;
  if (statSync(path).isDirectory()) {
    for (const name of readdirSync(path).sort()) {
      if (name === 'api' || name === 'node_modules') continue;
      collect(join(path, name), out);
    }
  } else if (path.endsWith('.md')) out.push(path);
  return out;
}

/** The ```ts blocks of a Markdown text: their code and the line of their first code line. */
export function tsBlocks(text) {
  const blocks = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,})\s*(\S*)\s*(.*)$/.exec(lines[i]);
    if (!open) continue;
    const [, indent, ticks, lang, rest] = open;
    let j = i + 1;
    while (j < lines.length && !new RegExp(`^\\s*${ticks}\\s*$`).test(lines[j])) j++;
    const isTs = lang === 'ts' || lang === 'typescript';
    if (isTs && !/\bpartial\b/.test(rest)) {
      const code = lines.slice(i + 1, j).map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l));
      blocks.push({ line: i + 2, code: code.join('\n') });
    }
    i = j;
  }
  return blocks;
}

const files = inputs.flatMap((p) => collect(p, []));
const outDir = join(repo, '.snippets', `run-${process.pid}`);
rmSync(outDir, { recursive: true, force: true });
mkdirSync(outDir, { recursive: true });

const origin = new Map(); // snippet file name -> { md, line }
let count = 0;
for (const md of files) {
  for (const block of tsBlocks(readFileSync(md, 'utf8'))) {
    const name = `snippet-${++count}.ts`;
    // `export {}` keeps each snippet a module of its own, so two examples may declare the same names.
    writeFileSync(join(outDir, name), `${block.code}\nexport {};\n`);
    origin.set(name, { md: relative(process.cwd(), md) || md, line: block.line });
  }
}

if (count === 0) {
  console.log(`check-snippets: no ts blocks in ${files.length} files`);
  rmSync(outDir, { recursive: true, force: true });
  process.exit(0);
}

const lib = (p) => relative(outDir, join(repo, 'lib', p));
writeFileSync(
  join(outDir, 'tsconfig.json'),
  JSON.stringify({
    extends: relative(outDir, join(repo, 'tsconfig.json')),
    compilerOptions: {
      noEmit: true,
      rootDir: relative(outDir, repo),
      noUnusedLocals: false,
      paths: {
        'nestjs-transactional-email': [lib('index.ts')],
        'nestjs-transactional-email/testing': [lib('kit/index.ts')],
        'nestjs-transactional-email/queue': [lib('queue/index.ts')],
        'nestjs-transactional-email/outbox': [lib('outbox/index.ts')],
      },
    },
    include: ['*.ts'],
  }),
);

const tsc = join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
const run = spawnSync(process.execPath, [tsc, '-p', join(outDir, 'tsconfig.json'), '--pretty', 'false'], {
  cwd: outDir,
  encoding: 'utf8',
});
const output = `${run.stdout}${run.stderr}`;
const problems = [];
for (const line of output.split('\n')) {
  if (!line.trim()) continue;
  const m = /^(.*?)\((\d+),(\d+)\): (.*)$/.exec(line);
  const snippet = m && origin.get(m[1].split(/[\\/]/).pop());
  if (m && snippet && resolve(outDir, m[1]).startsWith(outDir)) {
    problems.push(`${snippet.md}:${snippet.line + Number(m[2]) - 1}:${m[3]}: ${m[4]}`);
  } else if (/error/i.test(line) || problems.length > 0) {
    problems.push(line);
  }
}
rmSync(outDir, { recursive: true, force: true });

if (run.status !== 0) {
  for (const p of problems.length > 0 ? problems : [output]) console.error(p);
  console.error(`check-snippets: ${count} ts blocks in ${files.length} files; tsc failed`);
  process.exit(1);
}
console.log(`check-snippets: ${count} ts blocks in ${files.length} files type-check`);

#!/usr/bin/env node
// Link check: every relative link in README.md, CONTRIBUTING.md, CHANGELOG.md, docs/**/*.md and the bench log
// (test/bench/LOG.md) must point to an existing file, and every #anchor to a heading of the target (GitHub's
// slug rules).
// Usage: node scripts/check-links.mjs [rootDir]. Prints one line per broken link (file:line) and exits 1.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(process.argv[2] ?? '.');

/** The Markdown files checked, relative to root. */
function markdownFiles() {
  const files = ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', 'test/bench/LOG.md'].filter((f) =>
    existsSync(join(root, f)),
  );
  const walk = (dir) => {
    for (const name of readdirSync(join(root, dir))) {
      const rel = join(dir, name);
      if (rel === join('docs', 'api')) continue; // generated
      if (statSync(join(root, rel)).isDirectory()) walk(rel);
      else if (name.endsWith('.md')) files.push(rel);
    }
  };
  if (existsSync(join(root, 'docs'))) walk('docs');
  return files;
}

/** Lines outside fenced code blocks, with their 1-based numbers. */
function proseLines(text) {
  const out = [];
  let fence = null;
  text.split('\n').forEach((line, i) => {
    const m = /^\s*(`{3,}|~{3,})/.exec(line);
    if (m) {
      if (fence === null) fence = m[1][0];
      else if (m[1][0] === fence) fence = null;
      return;
    }
    if (fence === null) out.push({ line, n: i + 1 });
  });
  return out;
}

/** GitHub's anchor for a heading text: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading) {
  return heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]*>/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/ /g, '-');
}

const anchorCache = new Map();
function anchorsOf(file) {
  if (!anchorCache.has(file)) {
    const seen = new Map();
    const anchors = new Set();
    for (const { line } of proseLines(readFileSync(file, 'utf8'))) {
      const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
      if (!h) continue;
      const base = slug(h[1].replace(/`/g, '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1'));
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      anchors.add(count === 0 ? base : `${base}-${count}`);
    }
    anchorCache.set(file, anchors);
  }
  return anchorCache.get(file);
}

const problems = [];
const files = markdownFiles();
for (const rel of files) {
  const abs = join(root, rel);
  for (const { line, n } of proseLines(readFileSync(abs, 'utf8'))) {
    const noCode = line.replace(/`[^`]*`/g, '');
    for (const m of noCode.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = m[1];
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
      const [path, anchor] = target.split('#');
      const targetFile = path ? resolve(dirname(abs), decodeURIComponent(path)) : abs;
      if (!existsSync(targetFile)) {
        problems.push(`${rel}:${n}: broken link ${target} (no file ${relative(root, targetFile)})`);
        continue;
      }
      if (
        anchor !== undefined &&
        targetFile.endsWith('.md') &&
        !anchorsOf(targetFile).has(anchor.toLowerCase())
      ) {
        problems.push(
          `${rel}:${n}: broken link ${target} (no heading #${anchor} in ${relative(root, targetFile)})`,
        );
      }
    }
  }
}

if (problems.length > 0) {
  for (const p of problems) console.error(p);
  console.error(`check-links: ${problems.length} broken link(s) in ${files.length} files`);
  process.exit(1);
}
console.log(`check-links: ${files.length} files, all links resolve`);

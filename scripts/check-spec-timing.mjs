#!/usr/bin/env node
// `npm run lint` runs this: it refuses a spec that asserts a tight bound on elapsed wall time, which
// fails on a loaded machine (a benchmark measures speed; a spec checks that something ends at all).
//
// Tight: `expect(X).toBeLessThan(N)` or `.toBeLessThanOrEqual(N)` where X reads the clock (Date.now(),
// performance.now(), process.hrtime, hrtime.bigint, or a variable of the same file whose value does so,
// e.g. `const took = Date.now() - started`) and N is a constant under 5,000 ms (a number, a const of
// the same file, or sums and products of those). Lower bounds (a wait really waited) are allowed.
//
// Usage: node scripts/check-spec-timing.mjs [files...]   (no files: every *.spec.ts under test/)
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const TIGHT_MS = 5000;
const UPPER_BOUNDS = new Set(['toBeLessThan', 'toBeLessThanOrEqual']);
const root = join(fileURLToPath(import.meta.url), '../..');

/** `Date.now()`, `performance.now()`, `process.hrtime(...)`, `process.hrtime.bigint()`, `hrtime.bigint()`. */
function isClockCall(node) {
  if (!ts.isCallExpression(node)) return false;
  const callee = node.expression.getText();
  return /(^|\.)(Date\.now|performance\.now|hrtime|hrtime\.bigint)$/.test(callee);
}

/** Every variable of the file with its initializer (the value a `const took = ...` holds). */
function initializers(source) {
  const found = new Map();
  const visit = (node) => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer)
      found.set(node.name.text, node.initializer);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Whether `node` reads the clock, directly or through variables of the file. */
function readsClock(node, vars, seen = new Set()) {
  if (isClockCall(node)) return true;
  if (ts.isIdentifier(node) && vars.has(node.text) && !seen.has(node.text)) {
    seen.add(node.text);
    return readsClock(vars.get(node.text), vars, seen);
  }
  let hit = false;
  ts.forEachChild(node, (child) => {
    hit ||= readsClock(child, vars, seen);
  });
  return hit;
}

/** The number `node` stands for when it is a constant of the file, else undefined. */
function constantValue(node, vars, seen = new Set()) {
  if (ts.isNumericLiteral(node)) return Number(node.text.replace(/_/g, ''));
  if (ts.isParenthesizedExpression(node)) return constantValue(node.expression, vars, seen);
  if (ts.isPrefixUnaryExpression(node) && node.operator === ts.SyntaxKind.MinusToken) {
    const v = constantValue(node.operand, vars, seen);
    return v === undefined ? undefined : -v;
  }
  if (ts.isIdentifier(node) && vars.has(node.text) && !seen.has(node.text)) {
    seen.add(node.text);
    return constantValue(vars.get(node.text), vars, seen);
  }
  if (ts.isBinaryExpression(node)) {
    const a = constantValue(node.left, vars, seen);
    const b = constantValue(node.right, vars, seen);
    if (a === undefined || b === undefined) return undefined;
    switch (node.operatorToken.kind) {
      case ts.SyntaxKind.PlusToken:
        return a + b;
      case ts.SyntaxKind.MinusToken:
        return a - b;
      case ts.SyntaxKind.AsteriskToken:
        return a * b;
      case ts.SyntaxKind.SlashToken:
        return a / b;
    }
  }
  return undefined;
}

/** The tight elapsed-time bounds asserted in `text` (a spec file named `name`): `{ line, text }` each. */
export function tightBounds(name, text) {
  const source = ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const vars = initializers(source);
  const found = [];
  const visit = (node) => {
    // expect(X).toBeLessThan(N)
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      UPPER_BOUNDS.has(node.expression.name.text) &&
      node.arguments.length === 1
    ) {
      let target = node.expression.expression;
      while (ts.isPropertyAccessExpression(target)) target = target.expression; // expect(X).not.
      if (
        ts.isCallExpression(target) &&
        target.expression.getText() === 'expect' &&
        target.arguments.length === 1 &&
        readsClock(target.arguments[0], vars)
      ) {
        const bound = constantValue(node.arguments[0], vars);
        if (bound !== undefined && bound < TIGHT_MS) {
          const { line } = source.getLineAndCharacterOfPosition(node.getStart());
          found.push({ line: line + 1, text: node.getText().split('\n')[0] });
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function* specFiles(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'fixtures') yield* specFiles(path);
    } else if (/\.spec\.ts$/.test(entry.name)) yield path;
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const files = process.argv.length > 2 ? process.argv.slice(2) : [...specFiles(join(root, 'test'))];
  let bad = 0;
  for (const file of files) {
    for (const hit of tightBounds(file, readFileSync(file, 'utf8'))) {
      bad++;
      console.error(
        `${relative(process.cwd(), file)}:${hit.line}: a bound under ${TIGHT_MS} ms on elapsed time: ${hit.text}`,
      );
    }
  }
  if (bad > 0) {
    console.error(
      `check-spec-timing: ${bad} tight elapsed-time bound(s). A loaded machine misses them: check that the ` +
        `thing ends at all (a wait longer than the test's timeout), or allow ${TIGHT_MS} ms or more.`,
    );
    process.exit(1);
  }
  console.log(`check-spec-timing: ${files.length} spec files, no tight elapsed-time bound`);
}

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The guide that holds the install lines, one block per NestJS major. */
export const INSTALL_GUIDE = join(fileURLToPath(import.meta.url), '../../../docs/getting-started.md');

/** The guide that holds the ORM lines of the outbox, one block per NestJS major. */
export const ORM_GUIDE = join(fileURLToPath(import.meta.url), '../../../docs/outbox.md');

/** A NestJS major that has its own block of install lines. */
export type NestMajor = 'nest11' | 'nest12';

/** A block of install lines: a major's own (getting-started.md) or its ORMs' (outbox.md, `<major>-orms`). */
export type InstallBlock = NestMajor | `${NestMajor}-orms`;

/** One package of an `npm install` line: its name and the range asked for (`latest` when none). */
export interface InstallSpec {
  name: string;
  range: string;
}

/**
 * The `npm install` lines of the block marked `<!-- install-lines: <major> -->` in `markdown` (the next
 * fenced block after the mark), as written: comments (`# ...`) and blank lines dropped.
 */
export function installLines(markdown: string, major: InstallBlock): string[] {
  const mark = `<!-- install-lines: ${major} -->`;
  const at = markdown.indexOf(mark);
  if (at < 0) throw new Error(`no "${mark}" in the install guide`);
  const block = /```bash\n([\s\S]*?)```/.exec(markdown.slice(at));
  if (!block) throw new Error(`no bash block after "${mark}"`);
  return block[1]
    .split('\n')
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter((line) => line !== '');
}

/** `@nestjs/config@^4` -> `{ name: '@nestjs/config', range: '^4' }`; `bullmq` -> range `latest`. */
export function parseSpec(word: string): InstallSpec {
  const at = word.indexOf('@', 1);
  return at < 0 ? { name: word, range: 'latest' } : { name: word.slice(0, at), range: word.slice(at + 1) };
}

/**
 * The packages the block of `major` installs, in order. Every line must be a plain `npm install`
 * of package names (no flags): anything else is refused, so the consumer test installs exactly
 * what a user copying the block gets.
 */
export function installSpecs(
  major: InstallBlock,
  markdown = readFileSync(major.endsWith('-orms') ? ORM_GUIDE : INSTALL_GUIDE, 'utf8'),
): InstallSpec[] {
  const specs: InstallSpec[] = [];
  for (const line of installLines(markdown, major)) {
    const [npm, install, ...words] = line.split(/\s+/);
    if (npm !== 'npm' || install !== 'install' || words.length === 0 || words.some((w) => w.startsWith('-')))
      throw new Error(`not a plain "npm install <packages>" line: ${line}`);
    specs.push(...words.map(parseSpec));
  }
  return specs;
}

/** Everything an app of `major` installs from the docs: the major's block, then its ORM block (outbox.md). */
export function documentedSpecs(major: NestMajor): InstallSpec[] {
  return [...installSpecs(major), ...installSpecs(`${major}-orms`)];
}

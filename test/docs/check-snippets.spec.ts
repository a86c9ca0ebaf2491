// The snippet check fails on a broken example, naming the Markdown file and the line of the bad code.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const repo = process.cwd();
const script = join(repo, 'scripts', 'check-snippets.mjs');

describe('scripts/check-snippets.mjs', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'snippets-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // One run over both guides (one TypeScript program): the broken guide fails, naming its file and line; the
  // good one, with a `ts partial` block that is not TypeScript, adds nothing. The guides are the spec's own and
  // import nothing: what is checked here is the script (blocks found, lines mapped back to the Markdown, partial
  // blocks skipped), and a program that loads the package's sources costs some 8 s of CPU. That the project's
  // own guides type-check against the package is `npm run check:docs`, which `npm run lint` runs.
  it('fails on a renamed option, naming the file and the line; passes a good guide and skips `ts partial` blocks', () => {
    const options = [
      '```ts',
      '/** The options of a module, as a guide would show them. */',
      'interface SendOptions {',
      '  apiKey: string;',
      '  maxRetries?: number;',
      '}',
      'export const send = (options: SendOptions): number => options.maxRetries ?? 0;',
      '```',
    ];
    const guide = [
      '# A guide',
      '',
      'Some prose before the code.',
      '',
      ...options,
      '',
      'More prose, then a block that only shows a shape:',
      '',
      '```ts partial',
      'this is not TypeScript at all',
      '```',
      '',
    ].join('\n');
    writeFileSync(join(dir, 'good.md'), guide);
    // An example that uses an option the options do not have.
    const broken = [...options.slice(0, -1), '', "send({ apiKey: 'k', retries: 3 });", '```'].join('\n');
    const text = `${guide}\n${broken}\n`;
    writeFileSync(join(dir, 'broken.md'), text);
    const badLine = text.split('\n').findIndex((l) => l.includes('retries: 3')) + 1;

    const run = spawnSync(process.execPath, [script, join(dir, 'good.md'), join(dir, 'broken.md')], {
      cwd: dir,
      encoding: 'utf8',
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`broken.md:${badLine}:`);
    expect(run.stderr).toMatch(/retries/);
    expect(run.stderr).not.toContain('good.md');
    expect(run.stderr).toMatch(/check-snippets: \d+ ts blocks in 2 files; tsc failed/);
  });
});

// The snippet check fails on a broken example, naming the Markdown file and the line of the bad code.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

  // One run over both guides (one TypeScript program, which is what costs): the broken guide fails,
  // naming its file and line; the good one, with a `ts partial` block that is not TypeScript, adds nothing.
  it('fails on a renamed option, naming the file and the line; passes a good guide and skips `ts partial` blocks', () => {
    const guide = readFileSync(join(repo, 'docs', 'errors.md'), 'utf8');
    writeFileSync(
      join(dir, 'good.md'),
      `${guide}\n\`\`\`ts partial\nthis is not TypeScript at all\n\`\`\`\n`,
    );
    // An example that uses an option EmailModule does not have.
    const broken = [
      '```ts',
      "import { EmailModule } from 'nestjs-transactional-email';",
      '',
      "EmailModule.forRoot({ apiKey: 'k', baseUrl: 'http://127.0.0.1:1', retries: 3 });",
      '```',
    ].join('\n');
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

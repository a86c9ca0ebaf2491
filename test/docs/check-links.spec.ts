// The link check fails on a relative link to a missing file and on an anchor that is no heading.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const script = join(process.cwd(), 'scripts', 'check-links.mjs');

function check(files: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), 'links-'));
  try {
    mkdirSync(join(dir, 'docs'));
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    return spawnSync(process.execPath, [script, dir], { encoding: 'utf8' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const guide = '# Sending\n\n## The `send` options (v2)\n\nText.\n\n```md\n[not a link](nowhere.md)\n```\n';

describe('scripts/check-links.mjs', () => {
  it('accepts links to files and to headings (GitHub slugs)', () => {
    const run = check({
      'README.md': '# Front\n\nSee [sending](docs/sending.md#the-send-options-v2) and [top](#front).\n',
      'docs/sending.md': guide,
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });

  it('fails on a missing file and on a missing anchor, naming file and line', () => {
    const run = check({
      'README.md': '# Front\n\nSee [gone](docs/gone.md).\nAnd [bad anchor](docs/sending.md#options).\n',
      'docs/sending.md': guide,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('README.md:3: broken link docs/gone.md');
    expect(run.stderr).toContain('README.md:4: broken link docs/sending.md#options');
  });
});

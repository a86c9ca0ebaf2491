// scripts/check-layers.mjs (run by `npm run lint`): the layer table and the role vocabulary of lib/.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const script = join(process.cwd(), 'scripts', 'check-layers.mjs');
const run = (...args: string[]) => spawnSync(process.execPath, [script, ...args], { encoding: 'utf8' });

describe('scripts/check-layers.mjs', () => {
  let dir: string;
  beforeEach(() => void (dir = mkdtempSync(join(tmpdir(), 'check-layers-spec-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const write = (path: string, text = 'export const x = 1;\n') => {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  };

  it('passes on lib/', () => {
    const result = run();
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('its --self-test passes', () => {
    expect(run('--self-test').status).toBe(0);
  });

  it('fails a file whose role is not in the vocabulary, naming it', () => {
    write('http/email.transport2.ts');
    write('service/email.service.ts');
    write('service/send-many.runner-ish.ts');
    const result = run('--root', dir);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/http\/email\.transport2\.ts: not <topic>\.<role>\.ts/);
    expect(result.stderr).toMatch(/service\/send-many\.runner-ish\.ts: not <topic>\.<role>\.ts/);
    expect(result.stderr).not.toMatch(/email\.service\.ts/);
  });

  it('fails an upward import and a sandbox file named outside the island rules', () => {
    write('errors/email.error.ts', "import { EmailService } from '../service/email.service.js';\n");
    write('service/email.service.ts');
    write('testing/sandbox.clock.ts');
    write('testing/page/page.anything.ts');
    write('testing/clock.helpers.ts');
    const result = run('--root', dir);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/errors\/email\.error\.ts \(layer \d+ errors\) imports \.\.\/service/);
    expect(result.stderr).toMatch(/testing\/clock\.helpers\.ts: a sandbox file is named/);
    expect(result.stderr).not.toMatch(/sandbox\.clock|page\.anything/);
  });
});

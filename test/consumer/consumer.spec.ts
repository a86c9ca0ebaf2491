/**
 * The packed package, installed as a user installs it: `npm pack`, then the tarball in two fresh
 * projects outside this repository. It proves that `exports`, the shipped declarations and `files`
 * are right, for a NestJS 12 ESM + strict TypeScript app and a NestJS 11 CommonJS app (require(esm)).
 * Set EMAIL_SKIP_CONSUMER=1 to skip it in a quick local run.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packPackage, type PackedPackage } from './consumer.pack.js';
import { consumerResult, run } from './consumer.process.js';
import { createConsumer } from './consumer.project.js';

const suite = process.env.EMAIL_SKIP_CONSUMER === '1' ? describe.skip : describe;

suite('consumer of the packed package', () => {
  let workDir: string;
  let packed: PackedPackage;
  let esmDir: string;
  let cjsDir: string;

  beforeAll(async () => {
    workDir = mkdtempSync(join(tmpdir(), 'nte-consumer-'));
    packed = await packPackage(workDir);
    [esmDir, cjsDir] = await Promise.all([
      createConsumer(workDir, packed.tarball, {
        name: 'esm-nest12',
        type: 'module',
        nest: 12,
        extraDeps: { typescript: '~6.0.3', '@types/node': '^20.19.0' },
        files: [
          ['esm/app.ts', 'src/app.ts'],
          ['esm/tsconfig.json', 'tsconfig.json'],
        ],
      }),
      createConsumer(workDir, packed.tarball, {
        name: 'cjs-nest11',
        type: 'commonjs',
        nest: 11,
        files: [['cjs/app.cjs', 'app.cjs']],
      }),
    ]);
  }, 300_000);

  afterAll(() => {
    if (workDir && !process.env.EMAIL_KEEP_CONSUMER) rmSync(workDir, { recursive: true, force: true });
  });

  const expected = (bodyText: string) => ({
    id: 1,
    sameId: true,
    createdAtIsDate: true,
    bodyText,
    validation: 'EmailValidationError',
    sandboxCount: 1,
  });

  it('ships the built entry points, their declarations and the bin, and nothing else', () => {
    const files = packed.files;
    for (const f of [
      'package.json',
      'dist/index.js',
      'dist/index.d.ts',
      'dist/testing/index.js',
      'dist/testing/index.d.ts',
      'dist/testing/sandbox.cli.js',
      'dist/testing/outbox/assets/outbox.html',
      'dist/testing/outbox/assets/outbox.js',
      'dist/testing/outbox/assets/outbox.css',
    ]) {
      expect(files).toContain(f);
    }
    const stray = files.filter(
      (f) => !/^(package\.json|README\.md|CHANGELOG\.md|LICENSE)$/.test(f) && !f.startsWith('dist/'),
    );
    expect(stray).toEqual([]);
    expect(files.filter((f) => /\.tsbuildinfo$|\.spec\./.test(f))).toEqual([]);
  });

  it('compiles a strict TypeScript app against the shipped types (NestJS 12, ESM)', async () => {
    await expect(
      run(join(esmDir, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json'], esmDir),
    ).resolves.toBeDefined();
  }, 120_000);

  it('boots a NestJS 12 ESM app that sends through the sandbox', async () => {
    const { stdout } = await run('node', ['dist/app.js'], esmDir, 60_000);
    expect(consumerResult(stdout)).toEqual(expected('Hello from ESM'));
  }, 60_000);

  it('boots a NestJS 11 CommonJS app that require()s the package and sends through the sandbox', async () => {
    const { stdout, stderr } = await run('node', ['app.cjs'], cjsDir, 60_000);
    expect(consumerResult(stdout)).toEqual(expected('Hello from CommonJS'));
    expect(stderr).not.toMatch(/Error/);
  }, 60_000);

  it('keeps internal files private: a deep import is refused by `exports`', async () => {
    const script = `import('nestjs-transactional-email/dist/service/email.service.js').then(
      () => console.log('LOADED'), (e) => console.log(e.code))`;
    const { stdout } = await run('node', ['--input-type=module', '-e', script], esmDir);
    expect(stdout.trim()).toBe('ERR_PACKAGE_PATH_NOT_EXPORTED');
  });

  it('installs the email-sandbox command', async () => {
    const bin = join(cjsDir, 'node_modules/.bin/email-sandbox');
    expect(statSync(bin).mode & 0o111).not.toBe(0);
    const { stdout } = await run(bin, ['--help'], cjsDir);
    expect(stdout).toContain('Usage: email-sandbox');
  });
});

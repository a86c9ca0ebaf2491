/**
 * The packed package, installed as a user installs it: `npm pack` once, then the tarball in two fresh
 * projects outside this repository, one per Nest major, each holding what `nest new` of that major
 * generates (package.json, tsconfig.json, test config, AppModule, and Nest's own unit and e2e specs) plus
 * exactly the packages of the documented install lines of that major (docs/getting-started.md, read by
 * `installSpecs`), installed two at a time, sharing the npm cache:
 * - Nest 11, CommonJS: the app's default runners as generated (`jest`, and `jest --config
 *   test/jest-e2e.json`: Jest 30 + ts-jest, `module: nodenext`), run to the end, Nest's generated e2e spec
 *   included (it boots AppModule with EmailModule in it); our e2e tests and the optional peers of the
 *   install lines (@nestjs/config 4, Terminus 11, @nestjs/bullmq 11, Swagger 11) under that Jest;
 *   `tsc` with classic `node` resolution; a `nodenext` build run with node, which also loads the ES
 *   module build beside the CommonJS one; a plain `require()` script.
 * - Nest 12, ES modules: the app's default runners as generated (`vitest run`, and the e2e config),
 *   Nest's generated e2e spec and the optional peers of the install lines included; Jest in ESM mode;
 *   a strict `tsc` build, run with node.
 * Each boots EmailModule, sends through EmailSandbox and gets a 400 from ValidationPipe with our DTO.
 * Set EMAIL_SKIP_CONSUMER=1 to skip it in a quick local run, EMAIL_KEEP_CONSUMER=1 to keep the projects.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packPackage, type PackedPackage } from './consumer.pack.js';
import { consumerResult, run, testRunCounts } from './consumer.process.js';
import { createConsumer } from './consumer.project.js';

const suite = process.env.EMAIL_SKIP_CONSUMER === '1' ? describe.skip : describe;

/** Each runner's e2e file holds three tests: a send, a 400 from ValidationPipe, an instanceof check. */
const E2E_TESTS = 3;
/** The optional peers of the install lines: config, Terminus health page, Swagger document, queue + BullModule. */
const PEER_TESTS = 4;
/** Nest's generated specs: one unit test (`AppController`), one e2e test (`GET /`). */
const GENERATED_UNIT_TESTS = 1;
const GENERATED_E2E_TESTS = 1;
/**
 * What Nest's generated e2e spec needs to boot AppModule, which takes its EmailModule options from the
 * environment (emailConfig). EmailModule makes no request at boot, so nothing listens there.
 */
const GENERATED_ENV = { EMAIL_API_KEY: 'sk_test_generated_spec_0001', EMAIL_BASE_URL: 'http://127.0.0.1:9' };
/** The AppModule recipe of docs/testing-your-app.md (a sandbox mailbox, the matchers): two e2e tests per app. */
const APP_MODULE_TESTS = 2;

suite('consumer of the packed package', () => {
  let workDir: string;
  let packed: PackedPackage;
  let nest11: string;
  let nest12: string;

  beforeAll(async () => {
    workDir = mkdtempSync(join(tmpdir(), 'nte-consumer-'));
    packed = await packPackage(workDir);
    [nest11, nest12] = await Promise.all([
      createConsumer(workDir, packed.tarball, 'nest11'),
      createConsumer(workDir, packed.tarball, 'nest12'),
    ]);
  }, 420_000);

  afterAll(() => {
    if (workDir && !process.env.EMAIL_KEEP_CONSUMER) rmSync(workDir, { recursive: true, force: true });
  });

  const bin = (dir: string, name: string) => join(dir, 'node_modules/.bin', name);

  it('ships both builds, their declarations, the outbox files and the bin, and nothing else', () => {
    const files = packed.files;
    for (const dir of ['dist', 'dist/cjs']) {
      for (const f of [
        'index.js',
        'index.d.ts',
        'testing/index.js',
        'testing/index.d.ts',
        'kit/index.js',
        'kit/index.d.ts',
        'testing/outbox/assets/outbox.html',
        'testing/outbox/assets/outbox.js',
        'testing/outbox/assets/outbox.css',
      ]) {
        expect(files).toContain(`${dir}/${f}`);
      }
    }
    expect(files).toContain('dist/cjs/package.json');
    expect(files).toContain('dist/testing/sandbox.cli.js');
    const stray = files.filter(
      (f) => !/^(package\.json|README\.md|CHANGELOG\.md|LICENSE)$/.test(f) && !f.startsWith('dist/'),
    );
    expect(stray).toEqual([]);
    expect(files.filter((f) => /\.tsbuildinfo$|\.spec\.|\.cjs\.(js|d\.ts)$/.test(f))).toEqual([]);
  });

  describe('Nest 11, CommonJS', () => {
    it('type-checks as `nest new` set it up (nodenext) and with classic node resolution (typesVersions)', async () => {
      await expect(
        run(bin(nest11, 'tsc'), ['-p', 'tsconfig.json', '--noEmit'], nest11),
      ).resolves.toBeDefined();
      await expect(
        run(bin(nest11, 'tsc'), ['-p', 'tsconfig.classic.json', '--noEmit'], nest11),
      ).resolves.toBeDefined();
    }, 120_000);

    it("runs the app's generated unit tests with its default runner (`jest`)", async () => {
      const out = join(workDir, 'nest11-unit.json');
      await run(bin(nest11, 'jest'), ['--json', `--outputFile=${out}`], nest11, 120_000, GENERATED_ENV);
      expect(testRunCounts(out)).toEqual({ passed: GENERATED_UNIT_TESTS, failed: 0 });
    }, 120_000);

    it("runs its e2e tests to the end under `jest --config ./test/jest-e2e.json`: Nest's generated spec, ours, the peers", async () => {
      const out = join(workDir, 'nest11-e2e.json');
      await run(
        bin(nest11, 'jest'),
        ['--config', './test/jest-e2e.json', '--json', `--outputFile=${out}`],
        nest11,
        120_000,
        GENERATED_ENV,
      );
      expect(testRunCounts(out)).toEqual({
        passed: GENERATED_E2E_TESTS + E2E_TESTS + PEER_TESTS + APP_MODULE_TESTS,
        failed: 0,
      });
    }, 120_000);

    it('(b) compiles with nodenext and runs; one process holding both builds keeps instanceof', async () => {
      await run(bin(nest11, 'tsc'), ['-p', 'tsconfig.nodenext.json'], nest11);
      const { stdout } = await run('node', ['dist-nodenext/main.js'], nest11, 60_000);
      expect(consumerResult(stdout)).toEqual({
        sentStatus: 201,
        refusedStatus: 400,
        sandboxCount: 1,
        cjsErrorIsCjsClass: true,
        twoBuildsLoaded: true,
        cjsErrorIsEsmClass: true,
        esmErrorIsCjsClass: true,
        notOtherClass: false,
      });
    }, 120_000);

    it('loads the CommonJS build with a plain require(), sends through the sandbox, serves the outbox page', async () => {
      const { stdout, stderr } = await run('node', ['app.cjs'], nest11, 60_000);
      expect(consumerResult(stdout)).toEqual({
        id: 1,
        sameId: true,
        createdAtIsDate: true,
        bodyText: 'Hello from CommonJS',
        validation: 'EmailValidationError',
        sandboxCount: 1,
        outboxPage: '200 true',
        build: 'commonjs',
      });
      expect(stderr).not.toMatch(/Error/);
    }, 60_000);

    it('installs the email-sandbox command', async () => {
      const sandboxBin = bin(nest11, 'email-sandbox');
      expect(statSync(sandboxBin).mode & 0o111).not.toBe(0);
      const { stdout } = await run(sandboxBin, ['--help'], nest11);
      expect(stdout).toContain('Usage: email-sandbox');
    });
  });

  describe('Nest 12, ES modules', () => {
    it('type-checks as `nest new` set it up (its own e2e spec aside)', async () => {
      // Nest 12's generated test/app.e2e-spec.ts imports 'supertest/types', which TypeScript cannot
      // resolve in an ES module app (no `exports` in @types/supertest); Vitest does not type-check it.
      await expect(run(bin(nest12, 'tsc'), ['-p', 'tsconfig.check.json'], nest12)).resolves.toBeDefined();
    }, 120_000);

    it("runs the app's generated unit tests with its default runner (`vitest run`)", async () => {
      const out = join(workDir, 'nest12-unit.json');
      await run(
        bin(nest12, 'vitest'),
        ['run', '--reporter=json', `--outputFile=${out}`],
        nest12,
        120_000,
        GENERATED_ENV,
      );
      expect(testRunCounts(out)).toEqual({ passed: GENERATED_UNIT_TESTS, failed: 0 });
    }, 120_000);

    it("runs its e2e tests to the end under Vitest's e2e config: Nest's generated spec, ours, the peers", async () => {
      const out = join(workDir, 'nest12-e2e.json');
      await run(
        bin(nest12, 'vitest'),
        ['run', '--config', './vitest.config.e2e.ts', '--reporter=json', `--outputFile=${out}`],
        nest12,
        120_000,
        GENERATED_ENV,
      );
      expect(testRunCounts(out)).toEqual({
        passed: GENERATED_E2E_TESTS + E2E_TESTS + PEER_TESTS + APP_MODULE_TESTS,
        failed: 0,
      });
    }, 120_000);

    it('passes our e2e test under Jest in ESM mode', async () => {
      const out = join(workDir, 'nest12-jest.json');
      await run(bin(nest12, 'jest'), ['--json', `--outputFile=${out}`], nest12, 120_000, {
        NODE_OPTIONS: '--experimental-vm-modules',
      });
      expect(testRunCounts(out)).toEqual({ passed: E2E_TESTS, failed: 0 });
    }, 120_000);

    it('compiles a strict TypeScript app against the shipped types and runs it (outbox page served)', async () => {
      await run(bin(nest12, 'tsc'), ['-p', 'tsconfig.strict.json'], nest12);
      const { stdout } = await run('node', ['dist/src/main.js'], nest12, 60_000);
      expect(consumerResult(stdout)).toEqual({
        id: 1,
        sameId: true,
        createdAtIsDate: true,
        bodyText: 'Hello from ESM',
        validation: 'EmailValidationError',
        sandboxCount: 1,
        outboxPage: '200 true',
        build: 'esm',
      });
    }, 120_000);

    it('keeps internal files private: a deep import is refused by `exports`', async () => {
      const script = `import('nestjs-transactional-email/dist/service/email.service.js').then(
        () => console.log('LOADED'), (e) => console.log(e.code))`;
      const { stdout } = await run('node', ['--input-type=module', '-e', script], nest12);
      expect(stdout.trim()).toBe('ERR_PACKAGE_PATH_NOT_EXPORTED');
    });
  });
});

/**
 * The packed package, installed as a user installs it: `npm pack` once per run (`sharedPack`, shared
 * with consumer.nest12.spec.ts, so that Jest runs the two apps on its two workers), then the tarball in
 * a fresh project outside this repository holding what `nest new` of Nest 11 generates (package.json,
 * tsconfig.json, test config, AppModule, and Nest's own unit and e2e specs) plus exactly the packages of
 * the documented install lines of that major (docs/getting-started.md, read by `installSpecs`):
 * - Nest 11, CommonJS: the app's default runners as generated (`jest`, and `jest --config
 *   test/jest-e2e.json`: Jest 30 + ts-jest, `module: nodenext`), run to the end, Nest's generated e2e spec
 *   included (it boots AppModule with EmailModule in it); our e2e tests and the optional peers of the
 *   install lines (@nestjs/config 4, Terminus 11, @nestjs/bullmq 11, Swagger 11) under that Jest;
 *   `tsc` with classic `node` resolution; a `nodenext` build run with node, which also loads the ES
 *   module build beside the CommonJS one; a plain `require()` script.
 * It boots EmailModule, sends through EmailSandbox and gets a 400 from ValidationPipe with our DTO; its e2e
 * run gets a private PostgreSQL (DATABASE_URL: the outbox on each ORM, jobs for accounts) and a private Redis
 * (REDIS_URL: the queue's jobs for accounts), started here. The
 * app's checks are independent of each other: they start together after the install (two at a time,
 * `startChecks`) and each test awaits its own.
 * Set EMAIL_SKIP_CONSUMER=1 to skip it in a quick local run, EMAIL_KEEP_CONSUMER=1 to keep the projects.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { PackedPackage } from './consumer.pack.js';
import { consumerResult, run, testRunCounts, type RunResult } from './consumer.process.js';
import { startPostgres, type TestPostgres } from '../support/postgres-server.mjs';
import { startRedis, type TestRedis } from '../support/redis-server.mjs';
import { createConsumer } from './consumer.project.js';
import { consumerSuite, consumerWorkDir, sharedPack, startChecks } from './consumer.shared.js';
import {
  ACCOUNT_JOBS_TESTS,
  ACCOUNTS_TESTS,
  ACCOUNTS_CONFIG_TESTS,
  LINKS_CODES_TESTS,
  APP_MODULE_TESTS,
  E2E_TESTS,
  GENERATED_E2E_TESTS,
  GENERATED_ENV,
  GENERATED_UNIT_TESTS,
  ORM_TESTS,
  PEER_TESTS,
} from './consumer.counts.js';

const bin = (dir: string, name: string) => join(dir, 'node_modules/.bin', name);

/** The app's checks, started together once it is installed (see startChecks). */
function nest11Checks(workDir: string, app: string, databaseUrl: string, redisUrl: string) {
  const e2eEnv = { ...GENERATED_ENV, DATABASE_URL: databaseUrl, REDIS_URL: redisUrl, ORM_RUN: 'nest11' };
  return startChecks<string, RunResult>({
    // a type-check takes 20 s alone and several times that beside the rest of `npm test` on two cores
    tscNodenext: () => run(bin(app, 'tsc'), ['-p', 'tsconfig.json', '--noEmit'], app, 240_000),
    tscClassic: () => run(bin(app, 'tsc'), ['-p', 'tsconfig.classic.json', '--noEmit'], app, 240_000),
    unit: () =>
      run(
        bin(app, 'jest'),
        ['--json', `--outputFile=${join(workDir, 'nest11-unit.json')}`],
        app,
        120_000,
        GENERATED_ENV,
      ),
    e2e: () =>
      run(
        bin(app, 'jest'),
        ['--config', './test/jest-e2e.json', '--json', `--outputFile=${join(workDir, 'nest11-e2e.json')}`],
        app,
        300_000, // the outbox on five ORMs: pg-boss polling, under the load of the whole suite
        e2eEnv,
      ),
    nodenextBuild: async () => {
      await run(bin(app, 'tsc'), ['-p', 'tsconfig.nodenext.json'], app);
      return run('node', ['dist-nodenext/main.js'], app, 60_000);
    },
    requireScript: () => run('node', ['app.cjs'], app, 60_000),
    sandboxBin: () => run(bin(app, 'email-sandbox'), ['--help'], app),
    outboxSqlBin: () => run(bin(app, 'email-outbox-sql'), ['--schema', 'email_outbox', '--role', 'app'], app),
  });
}

consumerSuite('consumer of the packed package', () => {
  let workDir: string;
  let packed: PackedPackage;
  let nest11: string;
  let checks: ReturnType<typeof nest11Checks>;
  let postgres: TestPostgres | undefined;
  let redis: TestRedis | undefined;

  beforeAll(async () => {
    workDir = consumerWorkDir();
    packed = await sharedPack(workDir);
    ({ root: nest11 } = await createConsumer(workDir, packed.tarball, 'nest11'));
    // the databases of the e2e specs: the outbox on each ORM, and jobs for accounts (queue and outbox)
    const [pg, rd] = await Promise.all([startPostgres(), startRedis()]);
    [postgres, redis] = [pg, rd];
    checks = nest11Checks(workDir, nest11, pg.url, rd.url);
  }, 600_000);

  afterAll(async () => {
    await Promise.allSettled(Object.values(checks ?? {}));
    await Promise.all([postgres?.stop(), redis?.stop()]);
  }, 300_000);

  it('ships both builds, their declarations, the sandbox page files and the bin, and nothing else', () => {
    const files = packed.files;
    for (const dir of ['dist', 'dist/cjs']) {
      for (const f of [
        'index.js',
        'index.d.ts',
        'testing/index.js',
        'testing/index.d.ts',
        'kit/index.js',
        'kit/index.d.ts',
        'testing/page/assets/page.html',
        'testing/page/assets/page.js',
        'testing/page/assets/page.css',
      ]) {
        expect(files).toContain(`${dir}/${f}`);
      }
    }
    expect(files).toContain('dist/cjs/package.json');
    expect(files).toContain('dist/testing/sandbox.cli.js');
    expect(files).toContain('dist/outbox/outbox-setup.cli.js');
    const stray = files.filter(
      (f) => !/^(package\.json|README\.md|CHANGELOG\.md|LICENSE)$/.test(f) && !f.startsWith('dist/'),
    );
    expect(stray).toEqual([]);
    expect(files.filter((f) => /\.tsbuildinfo$|\.spec\.|\.cjs\.(js|d\.ts)$/.test(f))).toEqual([]);
  });

  describe('Nest 11, CommonJS', () => {
    it('type-checks as `nest new` set it up (nodenext) and with classic node resolution (typesVersions)', async () => {
      await expect(checks.tscNodenext).resolves.toBeDefined();
      await expect(checks.tscClassic).resolves.toBeDefined();
    }, 240_000);

    it("runs the app's generated unit tests with its default runner (`jest`)", async () => {
      await checks.unit;
      expect(testRunCounts(join(workDir, 'nest11-unit.json'))).toEqual({
        passed: GENERATED_UNIT_TESTS,
        failed: 0,
      });
    }, 240_000);

    it("runs its e2e tests to the end under `jest --config ./test/jest-e2e.json`: Nest's generated spec, ours, the peers, many accounts, jobs for accounts on Redis and PostgreSQL, the outbox on each documented ORM", async () => {
      await checks.e2e;
      expect(testRunCounts(join(workDir, 'nest11-e2e.json'))).toEqual({
        passed:
          GENERATED_E2E_TESTS +
          E2E_TESTS +
          PEER_TESTS +
          APP_MODULE_TESTS +
          ACCOUNTS_TESTS +
          ACCOUNT_JOBS_TESTS +
          ORM_TESTS +
          LINKS_CODES_TESTS +
          ACCOUNTS_CONFIG_TESTS,
        failed: 0,
      });
    }, 360_000);

    it('(b) compiles with nodenext and runs; one process holding both builds keeps instanceof', async () => {
      const { stdout } = await checks.nodenextBuild;
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
    }, 240_000);

    it('loads the CommonJS build with a plain require(), sends through the sandbox, serves the outbox page', async () => {
      const { stdout, stderr } = await checks.requireScript;
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
    }, 240_000);

    it('installs the email-sandbox command', async () => {
      expect(statSync(bin(nest11, 'email-sandbox')).mode & 0o111).not.toBe(0);
      const { stdout } = await checks.sandboxBin;
      expect(stdout).toContain('Usage: email-sandbox');
    }, 240_000);

    it('installs the email-outbox-sql command: the SQL of the pg-boss the app installed, for a DBA', async () => {
      expect(statSync(bin(nest11, 'email-outbox-sql')).mode & 0o111).not.toBe(0);
      const { stdout } = await checks.outboxSqlBin;
      expect(stdout).toContain('CREATE SCHEMA IF NOT EXISTS email_outbox');
      expect(stdout).toContain(`SELECT "email_outbox".create_queue('email'`);
      expect(stdout).toContain('GRANT USAGE ON SCHEMA "email_outbox" TO "app";');
    }, 240_000);
  });
});

/**
 * The packed package in a fresh Nest 12 ES module app (the pack is shared with consumer.nest11.spec.ts,
 * which describes the set-up): the app's default runners as generated (`vitest run`, and the e2e config),
 * Nest's generated e2e spec and the optional peers of the install lines included; Jest in ESM mode; a
 * strict `tsc` build, run with node. It boots EmailModule, sends through EmailSandbox and gets a 400 from
 * ValidationPipe with our DTO. The app's checks start together after the install (two at a time).
 * Set EMAIL_SKIP_CONSUMER=1 to skip it in a quick local run, EMAIL_KEEP_CONSUMER=1 to keep the projects.
 */
import { join } from 'node:path';
import { consumerResult, run, testRunCounts, type RunResult } from './consumer.process.js';
import { startPostgres, type TestPostgres } from '../support/postgres-server.mjs';
import { startRedis, type TestRedis } from '../support/redis-server.mjs';
import { createConsumer } from './consumer.project.js';
import { consumerSuite, consumerWorkDir, sharedPack, startChecks } from './consumer.shared.js';
import {
  ACCOUNT_JOBS_TESTS,
  ACCOUNTS_TESTS,
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
function nest12Checks(workDir: string, app: string, databaseUrl: string, redisUrl: string) {
  const e2eEnv = { ...GENERATED_ENV, DATABASE_URL: databaseUrl, REDIS_URL: redisUrl, ORM_RUN: 'nest12' };
  return startChecks<string, RunResult>({
    // the whole app, Nest 12's generated test/app.e2e-spec.ts included (it imports 'supertest/types.js')
    tsc: () => run(bin(app, 'tsc'), ['-p', 'tsconfig.check.json'], app, 240_000),
    unit: () =>
      run(
        bin(app, 'vitest'),
        ['run', '--reporter=json', `--outputFile=${join(workDir, 'nest12-unit.json')}`],
        app,
        120_000,
        GENERATED_ENV,
      ),
    e2e: () =>
      run(
        bin(app, 'vitest'),
        [
          'run',
          '--config',
          './vitest.config.e2e.ts',
          '--reporter=json',
          `--outputFile=${join(workDir, 'nest12-e2e.json')}`,
        ],
        app,
        300_000, // the outbox on five ORMs: pg-boss polling, under the load of the whole suite
        e2eEnv,
      ),
    jest: () =>
      run(bin(app, 'jest'), ['--json', `--outputFile=${join(workDir, 'nest12-jest.json')}`], app, 120_000, {
        NODE_OPTIONS: '--experimental-vm-modules',
      }),
    strictBuild: async () => {
      await run(bin(app, 'tsc'), ['-p', 'tsconfig.strict.json'], app);
      return run('node', ['dist/src/main.js'], app, 60_000);
    },
    deepImport: () =>
      run(
        'node',
        [
          '--input-type=module',
          '-e',
          `import('nestjs-transactional-email/dist/service/email.service.js').then(
            () => console.log('LOADED'), (e) => console.log(e.code))`,
        ],
        app,
      ),
  });
}

consumerSuite('consumer of the packed package', () => {
  let workDir: string;
  let checks: ReturnType<typeof nest12Checks>;
  let engineWarnings: string[] = [];
  let postgres: TestPostgres | undefined;
  let redis: TestRedis | undefined;

  beforeAll(async () => {
    workDir = consumerWorkDir();
    const packed = await sharedPack(workDir);
    const { root: nest12, engineWarnings: warned } = await createConsumer(workDir, packed.tarball, 'nest12');
    engineWarnings = warned;
    // the databases of the e2e specs: the outbox on each ORM, and jobs for accounts (queue and outbox)
    const [pg, rd] = await Promise.all([startPostgres(), startRedis()]);
    [postgres, redis] = [pg, rd];
    checks = nest12Checks(workDir, nest12, pg.url, rd.url);
  }, 600_000);

  afterAll(async () => {
    await Promise.allSettled(Object.values(checks ?? {}));
    await Promise.all([postgres?.stop(), redis?.stop()]);
  }, 300_000);

  describe('Nest 12, ES modules', () => {
    // docs/testing-your-app.md, "Node version and engine warnings": on Node 20 NestJS 12's tools warn, we do not.
    it('installs as documented with no engine warning of this package (on Node 20, only NestJS and its tools warn)', () => {
      if (process.env.EMAIL_CONSUMER_TIMES)
        process.stderr.write(
          `consumer: nest12 EBADENGINE for ${engineWarnings.length}: ${engineWarnings.join(' ')}\n`,
        );
      expect(engineWarnings.filter((name) => name.startsWith('nestjs-transactional-email@'))).toEqual([]);
      if (Number(process.versions.node.split('.')[0]) < 22) expect(engineWarnings.length).toBeGreaterThan(0);
    });

    it('type-checks as `nest new` set it up, its generated e2e spec and ours included', async () => {
      await expect(checks.tsc).resolves.toBeDefined();
    }, 240_000);

    it("runs the app's generated unit tests with its default runner (`vitest run`)", async () => {
      await checks.unit;
      expect(testRunCounts(join(workDir, 'nest12-unit.json'))).toEqual({
        passed: GENERATED_UNIT_TESTS,
        failed: 0,
      });
    }, 240_000);

    it("runs its e2e tests to the end under Vitest's e2e config: Nest's generated spec, ours, the peers, many accounts, jobs for accounts on Redis and PostgreSQL, the outbox on each documented ORM", async () => {
      await checks.e2e;
      expect(testRunCounts(join(workDir, 'nest12-e2e.json'))).toEqual({
        passed:
          GENERATED_E2E_TESTS +
          E2E_TESTS +
          PEER_TESTS +
          APP_MODULE_TESTS +
          ACCOUNTS_TESTS +
          ACCOUNT_JOBS_TESTS +
          ORM_TESTS +
          LINKS_CODES_TESTS,
        failed: 0,
      });
    }, 360_000);

    it('passes our e2e test under Jest in ESM mode', async () => {
      await checks.jest;
      expect(testRunCounts(join(workDir, 'nest12-jest.json'))).toEqual({ passed: E2E_TESTS, failed: 0 });
    }, 240_000);

    it('compiles a strict TypeScript app against the shipped types and runs it (outbox page served)', async () => {
      const { stdout } = await checks.strictBuild;
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
    }, 240_000);

    it('keeps internal files private: a deep import is refused by `exports`', async () => {
      const { stdout } = await checks.deepImport;
      expect(stdout.trim()).toBe('ERR_PACKAGE_PATH_NOT_EXPORTED');
    }, 240_000);
  });
});

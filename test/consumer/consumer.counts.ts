/** Each runner's e2e file holds three tests: a send, a 400 from ValidationPipe, an instanceof check. */
export const E2E_TESTS = 3;
/** The optional peers of the install lines: config, Terminus health page, Swagger document, queue + BullModule. */
export const PEER_TESTS = 4;
/** Nest's generated specs: one unit test (`AppController`), one e2e test (`GET /`). */
export const GENERATED_UNIT_TESTS = 1;
export const GENERATED_E2E_TESTS = 1;
/**
 * What Nest's generated e2e spec needs to boot AppModule, which takes its EmailModule options from the
 * environment (emailConfig). EmailModule makes no request at boot, so nothing listens there.
 */
export const GENERATED_ENV = {
  EMAIL_API_KEY: 'sk_test_generated_spec_0001',
  EMAIL_BASE_URL: 'http://127.0.0.1:9',
};
/** The AppModule recipe of docs/testing-your-app.md (a sandbox mailbox, the matchers): two e2e tests per app. */
export const APP_MODULE_TESTS = 2;
/**
 * Many accounts as docs/accounts.md and docs/testing-your-app.md show them (test/accounts.e2e-spec.ts): a
 * resolver class over the app's tenants with forRoot (four tests, and one whose tenants table connects at
 * boot) and with forRootAsync, and EmailTestingModule.forRoot({ accounts }).
 */
export const ACCOUNTS_TESTS = 7;
/**
 * Jobs for accounts (test/account-jobs.e2e-spec.ts): EmailQueue.send with `{ account, jobId }` on the Redis the
 * consumer spec starts (each tenant's mailbox, an unknown account and none refused at send, a key rotated
 * before the attempt, no key in Redis), and EmailOutbox.send with `{ tx, account, jobId }` in pg transactions
 * on its PostgreSQL (committed and rolled back, an unknown account refused with the transaction still
 * usable, no key in the outbox's schema).
 */
export const ACCOUNT_JOBS_TESTS = 7;
/** The outbox on each documented ORM (docs/outbox.md): TypeORM, MikroORM, Knex, Kysely, Drizzle, and Prisma installed. */
export const ORM_TESTS = 6;
/**
 * The test kit's links and codes (test/links-codes.e2e-spec.ts): a reset link waited for, matched and clicked
 * through the sandbox to the app; a login code waited for, matched and typed back. Both apps.
 */
export const LINKS_CODES_TESTS = 2;
/**
 * An accounts-only app from the environment (Nest 11's test/accounts-config.e2e-spec.ts): `emailConfig` with
 * `accounts` and no `EMAIL_API_KEY` boots and sends, an unknown tenant in the route is a 404, and without
 * accounts the boot names the variable.
 */
export const ACCOUNTS_CONFIG_TESTS = 3;

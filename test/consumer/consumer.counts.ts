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
 * resolver class over the app's tenants with forRoot (four tests, and one marked failing: a package defect)
 * and with forRootAsync, and EmailTestingModule.forRoot({ accounts }).
 */
export const ACCOUNTS_TESTS = 7;
/** The outbox on each documented ORM (docs/outbox.md): TypeORM, MikroORM, Knex, Kysely, Drizzle, and Prisma installed. */
export const ORM_TESTS = 6;

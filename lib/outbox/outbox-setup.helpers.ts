import { EmailOptionsError } from '../errors/email-options.error.js';
import { loadPgBoss } from '../peers/optional-peer.loader.js';
import { resolveEmailOutboxOptions } from './email-outbox.options.js';
import { FETCH_ORDER } from './outbox-sql.helpers.js';

/**
 * What `outboxSetupSql` writes the SQL for: the outbox's `schema` and `queueName` (as the app sets them), the
 * app's `role` (granted what the outbox uses), and `fromVersion`, pg-boss's schema version already installed
 * there (then the SQL migrates it instead of creating it).
 * @publicApi
 */
export interface OutboxSetupSqlOptions {
  /** @default 'pgboss' */
  schema?: string;
  /** @default 'email' */
  queueName?: string;
  /** The role the app connects as: granted the schema's tables (no CREATE). Without it, no GRANT is written. */
  role?: string;
  /** The pg-boss schema version installed (`SELECT version FROM <schema>.version`): migrate from it. */
  fromVersion?: number;
}

/** What `npx email-outbox-sql --help` prints. */
export const OUTBOX_SETUP_USAGE = `Usage: npx email-outbox-sql [--schema <name>] [--queue <name>] [--role <app role>] [--from-version <n>]

Prints the SQL a DBA runs once, as a role that may create schemas, so that the email outbox runs on a role
that may create nothing (EmailOutboxModule.forRoot({ ..., migrate: false })): pg-boss's tables and functions
(from the pg-boss installed here), the queue, the outbox's index in pg-boss's fetch order, and the grants of
the app's role.

  --schema        the outbox's schema (default: pgboss)
  --queue         the outbox's queueName (default: email)
  --role          the role the app connects as: granted the schema's tables
  --from-version  pg-boss's schema version already installed (SELECT version FROM <schema>.version):
                  the SQL migrates it instead of creating it (after upgrading pg-boss)

Example: npx email-outbox-sql --schema email_outbox --role app > outbox.sql && psql -v ON_ERROR_STOP=1 -f outbox.sql
`;

const FLAGS: Record<string, keyof OutboxSetupSqlOptions> = {
  '--schema': 'schema',
  '--queue': 'queueName',
  '--role': 'role',
  '--from-version': 'fromVersion',
};

/** `email-outbox-sql`'s arguments as `outboxSetupSql`'s options, or 'help'. @throws Error naming a bad argument */
export function parseOutboxSetupArgs(argv: readonly string[]): OutboxSetupSqlOptions | 'help' {
  const options: Record<string, string | number> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--help' || arg === '-h') return 'help';
    const [flag, inline] = arg.includes('=')
      ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
      : [arg];
    const key = FLAGS[flag as string];
    if (key === undefined) throw new Error(`unknown argument ${JSON.stringify(arg)}`);
    const value = inline ?? argv[++i];
    if (value === undefined || value === '') throw new Error(`${flag} needs a value`);
    options[key] = key === 'fromVersion' ? Number(value) : value;
  }
  return options as OutboxSetupSqlOptions;
}

/** What a loaded pg-boss offers for its SQL (10, 11 and 12 alike). */
interface PgBossPlans {
  getConstructionPlans(schema: string): string;
  getMigrationPlans(schema: string, version: number): string;
}

const ident = (name: string): string => `"${name.replaceAll('"', '""')}"`;
const literal = (text: string): string => `'${text.replaceAll("'", "''")}'`;

/**
 * The SQL a DBA runs once (as a role that may create schemas) so that the outbox runs on a role that may create
 * nothing, with `migrate: false`: pg-boss's own tables and functions in `schema` (pg-boss's construction SQL, or its
 * migration from `fromVersion`, from the pg-boss your app installed), the queue, the index in pg-boss's fetch order
 * that the outbox adds at boot where it may, and the grants of `role`. Printed by `npx email-outbox-sql`.
 * Run it again, with `fromVersion`, after upgrading pg-boss.
 * @throws EmailOptionsError for a schema, queue or role PostgreSQL would not take as a name, or a bad version.
 * @example
 * await queryRunner.query(outboxSetupSql({ schema: 'email_outbox', role: 'app' })); // in a migration of yours
 * @publicApi
 */
export function outboxSetupSql(options: OutboxSetupSqlOptions = {}): string {
  const problems: string[] = [];
  const { schema, queueName } = checked(options, problems);
  const { role, fromVersion } = options;
  if (role !== undefined && (typeof role !== 'string' || !/^[A-Za-z_][A-Za-z0-9_$-]{0,62}$/.test(role)))
    problems.push(`role must be a PostgreSQL role name (got ${JSON.stringify(role)})`);
  if (fromVersion !== undefined && !(Number.isInteger(fromVersion) && fromVersion > 0))
    problems.push(
      `fromVersion must be pg-boss's installed schema version, an integer (got ${String(fromVersion)})`,
    );
  if (problems.length > 0) throw new EmailOptionsError(problems.map((p) => `outboxSetupSql: ${p}`));
  const PgBoss = loadPgBoss() as unknown as PgBossPlans;
  const s = ident(schema);
  const pgBoss =
    fromVersion === undefined
      ? PgBoss.getConstructionPlans(schema)
      : PgBoss.getMigrationPlans(schema, fromVersion);
  const grants =
    role === undefined
      ? []
      : [
          `-- What the app's role uses: the schema's tables (run again after a migration adds one). No CREATE.`,
          `GRANT USAGE ON SCHEMA ${s} TO ${ident(role)};`,
          `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${s} TO ${ident(role)};`,
          `-- With standbys: waitForStandbys reads how far each one is (pg_stat_replication), which needs`,
          `-- GRANT pg_read_all_stats TO ${ident(role)};`,
        ];
  return [
    `-- The email outbox's schema ${s}, queue ${literal(queueName)} (nestjs-transactional-email/outbox on pg-boss).`,
    `-- Run once by a role that may create schemas, e.g. psql -v ON_ERROR_STOP=1 -f outbox.sql; the app then runs`,
    `-- with EmailOutboxModule.forRoot({ ..., schema: ${literal(schema)}, migrate: false }).`,
    fromVersion === undefined
      ? `-- pg-boss's tables and functions (its own construction SQL):`
      : `-- pg-boss's migration from schema version ${fromVersion} (its own SQL):`,
    pgBoss.trim(),
    `-- The queue (pg-boss's own function; nothing happens when it exists):`,
    `SELECT ${s}.create_queue(${literal(queueName)}, '{"policy":"standard"}');`,
    `-- An index in pg-boss's fetch order (pg-boss 10 and 11 have none; 12 has one, and then nothing is made):`,
    fetchIndexBlock(schema, queueName),
    ...grants,
    '',
  ].join('\n');
}

/** The schema and queue name, checked as the module's options check them. */
function checked(options: OutboxSetupSqlOptions, problems: string[]): { schema: string; queueName: string } {
  try {
    const o = resolveEmailOutboxOptions({
      connection: 'postgres://localhost/setup',
      ...(options.schema !== undefined ? { schema: options.schema } : {}),
      ...(options.queueName !== undefined ? { queueName: options.queueName } : {}),
    });
    return { schema: o.schema, queueName: o.queueName };
  } catch (err) {
    problems.push(...(err as EmailOptionsError).problems.map((p) => p.replace(/^EmailOutboxModule: /, '')));
    return { schema: 'pgboss', queueName: 'email' };
  }
}

/**
 * A block that makes the index the outbox would make at boot (see `OutboxBoss`), on the queue's own pg-boss table
 * (pg-boss 10's `partition_name`, 11's `table_name`), when no index leads in pg-boss's fetch order yet.
 */
function fetchIndexBlock(schema: string, queueName: string): string {
  return [
    `DO $outbox$`,
    `DECLARE t text;`,
    `BEGIN`,
    `  SELECT COALESCE(to_jsonb(q)->>'partition_name', to_jsonb(q)->>'table_name') INTO t`,
    `    FROM ${ident(schema)}.queue q WHERE q.name = ${literal(queueName)};`,
    `  IF t IS NOT NULL AND NOT EXISTS (SELECT 1 FROM pg_indexes i WHERE i.schemaname = ${literal(schema)}`,
    `      AND i.tablename = t AND i.indexdef LIKE ${literal(`%(${FETCH_ORDER}%`)}) THEN`,
    `    EXECUTE format('CREATE INDEX %I ON %I.%I (${FETCH_ORDER}, id) WHERE state < ''active''',`,
    `      left(t, 40) || '_email_fetch', ${literal(schema)}, t);`,
    `  END IF;`,
    `END`,
    `$outbox$;`,
  ].join('\n');
}

/** What the boot hint needs to ask PostgreSQL (the outbox's pool). */
type Ask = { query(text: string): Promise<{ rows: Array<Record<string, unknown>> }> };

/**
 * `npx email-outbox-sql ...` for an outbox: its schema and queue, the role it connects as, and the pg-boss
 * schema version already there (to migrate from), as far as PostgreSQL answers.
 */
export async function setupCommandFor(pool: Ask, o: { schema: string; queueName: string }): Promise<string> {
  const args = [`--schema ${o.schema}`, `--queue ${o.queueName}`];
  const ask = async (text: string) => (await pool.query(text)).rows[0];
  const role = await ask('SELECT current_user AS role').catch(() => undefined);
  if (typeof role?.role === 'string') args.push(`--role ${role.role}`);
  const version = await ask(`SELECT version FROM ${ident(o.schema)}.version`).catch(() => undefined);
  if (version?.version !== undefined && version.version !== null)
    args.push(`--from-version ${String(version.version)}`);
  return `npx email-outbox-sql ${args.join(' ')}`;
}

/**
 * What to do when pg-boss could not start for lack of a schema the role may not make (an empty string for any
 * other failure): the command that prints the SQL a DBA runs.
 */
export async function setupHintFor(
  err: unknown,
  pool: Ask,
  o: { schema: string; queueName: string; migrate: boolean },
): Promise<string> {
  const message = (err as Error | undefined)?.message ?? '';
  const code = (err as { code?: unknown } | undefined)?.code;
  if (o.migrate && code === '42501')
    return (
      `. This role may not create the outbox's schema: have a DBA run the SQL that ` +
      `\`${await setupCommandFor(pool, o)}\` prints and set migrate: false (or give the role a schema of its ` +
      `own: CREATE SCHEMA ${o.schema} AUTHORIZATION <role>)`
    );
  if (o.migrate || !/not installed|requires migrations|does not exist/.test(message)) return '';
  return `. With migrate: false the schema is made by a DBA: run the SQL that \`${await setupCommandFor(pool, o)}\` prints`;
}

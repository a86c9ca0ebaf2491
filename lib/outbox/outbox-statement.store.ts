import { createHash } from 'node:crypto';
import type { Pool } from 'pg';

/**
 * What PostgreSQL answers when a named statement cannot live on a connection: it does not exist there (a
 * pooler such as PgBouncer in transaction mode sent the bind to another server connection), or it exists
 * already (the pooler sent the parse twice). Either way the statement did not run, so running it unnamed is safe.
 */
const UNKEPT_STATEMENT = new Set(['26000', '42P05']);

/** The named statements one pool keeps at most: the worker has a handful (pg-boss's fetch may add a few). */
const MAX_NAMES = 32;

/**
 * The startup option that makes each connection of the outbox's own pool plan every execution for its own
 * values (`plan_cache_mode`, PostgreSQL 12+). A named statement may otherwise settle on a generic plan made
 * while its tables were nearly empty: measured here, a compare-and-set planned on a table of 20 records took
 * 0.65 ms, and 17.75 ms once the table held 50,000, until an ANALYZE came. Naming still saves each parse.
 */
export const PLAN_EACH_TIME = '-c plan_cache_mode=force_custom_plan';

/**
 * The worker's hot statements (fetch, compare-and-sets, ends), each parsed once per connection instead of at
 * every execution. Only on a pool the outbox made itself (`forOwnPool`), whose connections plan each
 * execution; on a pool the app passes, the statements run unnamed, as its sessions' settings are the app's. Each name is a hash of its text, so two schemas or two pg-boss versions never share one.
 * Behind a pooler that cannot keep statements, the first refusal turns naming off for good.
 */
export class OutboxStatements {
  private readonly names = new Map<string, string>();

  constructor(
    private readonly pool: Pool,
    private named: boolean,
  ) {}

  /**
   * The statements of the outbox's own pool, made with `PLAN_EACH_TIME`: named when its connections say they
   * plan each execution (a connection string with `options` of its own overrides ours; PostgreSQL before 12
   * has no such setting), unnamed otherwise.
   */
  static async forOwnPool(pool: Pool): Promise<OutboxStatements> {
    const { rows } = await pool.query(`SELECT current_setting('plan_cache_mode', true) AS mode`);
    return new OutboxStatements(pool, rows[0]?.mode === 'force_custom_plan');
  }

  async query(text: string, values: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }> {
    const name = this.named ? this.nameOf(text) : undefined;
    if (name === undefined) return this.pool.query(text, values);
    try {
      return await this.pool.query({ name, text, values });
    } catch (err) {
      if (!UNKEPT_STATEMENT.has(String((err as { code?: unknown } | null)?.code))) throw err;
      this.named = false;
      return this.pool.query(text, values);
    }
  }

  private nameOf(text: string): string | undefined {
    let name = this.names.get(text);
    if (name === undefined && this.names.size < MAX_NAMES) {
      name = `email_outbox_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
      this.names.set(text, name);
    }
    return name;
  }
}
